/**
 * `hajri-agent simulate --mqtt` against a real agent (Gateway with its embedded broker, a
 * spool on disk), and the agent's broker input on its own where a test must hold or restart it
 * (TLS and Mosquitto: simulate-mqtt-brokers.test.ts). A punch counts as acknowledged only on its PUBACK, which the
 * embedded broker sends once the punch is in the spool: every acknowledged punch must be there.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { connectAsync } from 'mqtt'
import { afterEach, describe, expect, it } from 'vitest'
import { MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import type { PunchSink } from '../../../agent/intake/punch-sink.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { MqttDeviceLink } from '../../../agent/simulator/mqtt-device-link.js'
import { PunchScript } from '../../../agent/simulator/punch-script.js'
import { runSimulation } from '../../../agent/simulator/simulation.js'
import { SimulationReport } from '../../../agent/simulator/simulation-report.js'
import { parseTimestamp } from '../../../shared/time.js'
import { freePort } from '../../support/e2e-kit.js'
import { HeldSink, mqttDevice, silentLog, startTestAgent, type TestAgent } from '../inputs/mqtt-test-agent.js'
import {
  cliInProcess,
  jsonPunchLines,
  punchKeys as keys,
  startSimulatorTestAgent,
  until,
} from './simulator-test-agent.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Per employee, in time order, the directions must go IN, OUT, IN... */
function expectAlternating(punches: SpooledPunch[]): void {
  const byEmployee = new Map<string, SpooledPunch[]>()
  for (const p of punches) byEmployee.set(p.employeeCode, [...(byEmployee.get(p.employeeCode) ?? []), p])
  for (const own of byEmployee.values()) {
    own.sort((a, b) => (parseTimestamp(a.punchedAt) ?? 0) - (parseTimestamp(b.punchedAt) ?? 0))
    expect(own.map((p) => p.punchType)).toEqual(own.map((_, k) => (k % 2 === 0 ? 'IN' : 'OUT')))
  }
}

async function agentWithBroker(format: 'json' | 'zk-attlog' = 'json') {
  const agent = await startSimulatorTestAgent({
    mqtt: { users: [{ username: 'gate-1', password: 'gate-1 pass' }] },
    devices: [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1', format, username: 'gate-1' } }],
  })
  cleanups.push(() => agent.stop())
  // As IT staff write it: `echo 'gate-1 pass' > gate-1.pass`, with its newline.
  const passwordFile = join(agent.dir, 'device.pass')
  await writeFile(passwordFile, 'gate-1 pass\n')
  const login = ['--topic', 'punches/gate-1', '--username', 'gate-1', '--password-file', passwordFile]
  return { agent, url: agent.mqttUrl as string, login }
}

describe('simulate --mqtt against the agent’s embedded broker', () => {
  it('every punch it reports acknowledged is in the spool, as the employee, direction and time printed', async () => {
    const { agent, url, login } = await agentWithBroker()
    const employees = 'E001,E002,E003'
    const run = cliInProcess([
      'simulate',
      '--mqtt',
      url,
      ...login,
      '--employees',
      employees,
      '--count',
      '20',
      '--rate',
      '10',
      '--json',
    ])
    expect(await run.done).toBe(0)
    const printed = jsonPunchLines(run.stdout())
    expect(printed).toHaveLength(20)
    expect(printed.every((p) => p.acknowledged)).toBe(true)
    expect(run.stdout().trimEnd().split('\n').at(-1)).toMatch(/"event":"summary","sent":20,"acknowledged":20/)

    const spooled = await agent.punches()
    expect(keys(spooled)).toEqual(keys(printed))
    expect(new Set(spooled.map((p) => p.id)).size).toBe(20)
    expect(new Set(spooled.map((p) => p.deviceId))).toEqual(new Set(['gate-1']))
    expect(new Set(spooled.map((p) => p.employeeCode))).toEqual(new Set(employees.split(',')))
    expectAlternating(spooled)
    expect(await agent.deadLettered()).toEqual([])
  })

  it('writes ATTLOG lines for a device configured with format zk-attlog', async () => {
    const { agent, url, login } = await agentWithBroker('zk-attlog')
    const run = cliInProcess([
      'simulate',
      '--mqtt',
      url,
      ...login,
      '--format',
      'zk-attlog',
      '--count',
      '8',
      '--json',
    ])
    expect(await run.done).toBe(0)
    const printed = jsonPunchLines(run.stdout())
    expect(printed).toHaveLength(8)
    expect(keys(await agent.punches())).toEqual(keys(printed))
    expect(await agent.deadLettered()).toEqual([])
  })

  it('at a load-test rate: a progress line instead of a line per punch, and every punch spooled once', async () => {
    const { agent, url, login } = await agentWithBroker()
    const run = cliInProcess(['simulate', '--mqtt', url, ...login, '--rate', '2000', '--count', '6000'])
    expect(await run.done).toBe(0)
    const lines = run.stdout().trimEnd().split('\n')
    expect(lines.filter((l) => l.startsWith('sent '))).toEqual([])
    expect(lines.at(-1)).toMatch(/^summary: 6000 sent, 6000 acknowledged in [\d.]+ s \(\d+\/s\)$/)
    const spooled = await agent.punches()
    expect(spooled).toHaveLength(6000)
    // Five employees, 6000 punches in about three seconds: only distinct times keep them 6000 punches.
    expect(new Set(spooled.map((p) => p.id)).size).toBe(6000)
    expectAlternating(spooled)
    const ahead = Math.max(...spooled.map((p) => parseTimestamp(p.punchedAt) ?? 0)) - Date.now() * 1000
    expect(ahead).toBeLessThan(60_000_000)
  })

  it('refuses wrong credentials with one line, exit 1', async () => {
    const { url, agent } = await agentWithBroker()
    const wrong = join(agent.dir, 'wrong.pass')
    await writeFile(wrong, 'not the password\n')
    const run = cliInProcess([
      'simulate',
      '--mqtt',
      url,
      '--topic',
      'punches/gate-1',
      '--username',
      'gate-1',
      '--password-file',
      wrong,
    ])
    expect(await run.done).toBe(1)
    expect(run.stderr()).toMatch(
      /^hajri-agent: cannot connect to the MQTT broker at mqtt:\/\/127\.0\.0\.1:\d+: .*--password-file\)\n$/,
    )
    expect(run.stderr()).not.toContain('not the password')
    expect(await agent.punches()).toEqual([])
  })
})

describe('simulate --mqtt and the PUBACK', () => {
  async function brokerInput(agent: TestAgent, port: number, sink: PunchSink = agent.intake) {
    const input = new MqttEmbeddedInput({
      config: { host: '127.0.0.1', port, users: [] },
      devices: [mqttDevice('gate-1', 'punches/gate-1')],
      sink,
      events: agent.events,
      log: silentLog,
    })
    await input.start()
    return input
  }

  it('reports a punch acknowledged only once the broker has PUBACKed it (stored it)', async () => {
    const agent = await startTestAgent([mqttDevice('gate-1', 'punches/gate-1')])
    cleanups.push(() => agent.close())
    const held = new HeldSink(agent.intake)
    const input = await brokerInput(agent, 0, held)
    cleanups.push(() => input.stop())
    const url = `mqtt://127.0.0.1:${input.address()?.port}`
    const run = cliInProcess(['simulate', '--mqtt', url, '--topic', 'punches/gate-1'])
    let exited = false
    void run.done.then(() => {
      exited = true
    })
    await until(() => held.held.length === 1, 'the punch to reach the agent')
    // A round trip through the broker for another client: a PUBACK sent for the held punch would be in.
    const other = await connectAsync(url, { reconnectPeriod: 0 })
    await other.publishAsync('elsewhere/status', 'ok', { qos: 1 })
    await other.endAsync()
    expect(run.stdout()).toBe('')
    expect(exited).toBe(false)
    expect(await agent.punches()).toEqual([])

    held.held[0]?.release()
    expect(await run.done).toBe(0)
    const [punch] = await agent.punches()
    const [line, summary] = run.stdout().trimEnd().split('\n')
    expect(line).toBe(`sent ${punch?.employeeCode} IN ${punch?.punchedAt} (acknowledged)`)
    expect(summary).toMatch(/^summary: 1 sent, 1 acknowledged in /)
  })

  it('sends again what was in flight when the agent restarted, and counts each punch once', async () => {
    const agent = await startTestAgent([mqttDevice('gate-1', 'punches/gate-1')])
    cleanups.push(() => agent.close())
    const port = await freePort()
    let input = await brokerInput(agent, port)
    cleanups.push(() => input.stop())
    const notices: string[] = []
    const lines: string[] = []
    const report = new SimulationReport({
      write: (text) => lines.push(text),
      json: true,
      perPunch: true,
      deliveredAs: 'acknowledged',
      timeZone: 'Asia/Kolkata',
    })
    const link = new MqttDeviceLink({
      url: `mqtt://127.0.0.1:${port}`,
      topic: 'punches/gate-1',
      notice: (m) => notices.push(m),
      reconnectMs: 50,
    })
    await link.open()
    const running = runSimulation({
      link,
      script: new PunchScript({ employees: ['E001', 'E002', 'E003'], resolutionMicros: 1000 }),
      toRecord: (p) =>
        JSON.stringify({
          employeeCode: p.employeeCode,
          punchType: p.punchType,
          punchedAt: new Date(p.at / 1000).toISOString(),
        }),
      pace: { kind: 'rate', perSecond: 100 },
      count: 300,
      report,
      stop: new AbortController().signal,
      giveUp: new AbortController().signal,
      notice: (m) => notices.push(m),
    })
    await until(() => report.acknowledged >= 50, 'some punches acknowledged')
    await input.stop()
    await until(() => notices.some((n) => n.includes('lost the connection')), 'the simulator to notice')
    input = await brokerInput(agent, port)
    const result = await running
    expect(result).toEqual({ sent: 300, acknowledged: 300, failure: undefined })
    expect(notices.some((n) => n.includes('again'))).toBe(true)
    const spooled = await agent.punches()
    // Each punch is in the spool: once, or twice if its PUBACK was lost with the connection (the
    // same punch id, which the cloud takes once).
    expect(new Set(spooled.map((p) => p.id)).size).toBe(300)
    const printed = lines.map((l) => JSON.parse(l)).filter((e) => e.event === 'punch')
    expect(printed).toHaveLength(300)
    expect(keys([...new Map(spooled.map((p) => [p.id, p])).values()])).toEqual(keys(printed))
  })

  it('without a line per punch, reports progress now and then: totals, and the rate since the last', async () => {
    const agent = await startTestAgent([mqttDevice('gate-1', 'punches/gate-1')])
    cleanups.push(() => agent.close())
    const input = await brokerInput(agent, 0)
    cleanups.push(() => input.stop())
    const link = new MqttDeviceLink({
      url: `mqtt://127.0.0.1:${input.address()?.port}`,
      topic: 'punches/gate-1',
      notice: () => {},
    })
    await link.open()
    const lines: string[] = []
    const report = new SimulationReport({
      write: (t) => lines.push(t),
      json: true,
      perPunch: false,
      deliveredAs: 'acknowledged',
      timeZone: 'Asia/Kolkata',
    })
    const result = await runSimulation({
      link,
      script: new PunchScript({ employees: ['E001', 'E002'], resolutionMicros: 1000 }),
      toRecord: (p) => JSON.stringify({ employeeCode: p.employeeCode, punchType: p.punchType }),
      pace: { kind: 'rate', perSecond: 500 },
      count: 500,
      report,
      stop: new AbortController().signal,
      giveUp: new AbortController().signal,
      notice: () => {},
      progressEveryMs: 100,
    })
    expect(result).toEqual({ sent: 500, acknowledged: 500, failure: undefined })
    // 500 at 500 a second take a second by the schedule alone: several progress lines, no punch lines.
    const events = lines.map((l) => JSON.parse(l))
    expect(events.length).toBeGreaterThan(1)
    for (const event of events) {
      expect(event).toEqual({
        event: 'progress',
        sent: expect.any(Number),
        acknowledged: expect.any(Number),
        perSecond: expect.any(Number),
      })
      expect(event.acknowledged).toBeLessThanOrEqual(event.sent)
    }
    expect(events.map((e) => e.sent)).toEqual([...events.map((e) => e.sent)].sort((a, b) => a - b))
    expect(await agent.punches()).toHaveLength(500)
  })

  /** A run with --every against a broker that holds each punch until the test releases it. */
  async function heldRun() {
    const agent = await startTestAgent([mqttDevice('gate-1', 'punches/gate-1')])
    cleanups.push(() => agent.close())
    const held = new HeldSink(agent.intake)
    const input = await brokerInput(agent, 0, held)
    cleanups.push(async () => {
      for (const h of held.held) h.release()
      await input.stop()
    })
    const notices: string[] = []
    const link = new MqttDeviceLink({
      url: `mqtt://127.0.0.1:${input.address()?.port}`,
      topic: 'punches/gate-1',
      notice: (m) => notices.push(m),
    })
    await link.open()
    const stop = new AbortController()
    const giveUp = new AbortController()
    const lines: string[] = []
    const running = runSimulation({
      link,
      script: new PunchScript({ employees: ['E001'], resolutionMicros: 1000 }),
      toRecord: (p) => JSON.stringify({ employeeCode: p.employeeCode, punchType: p.punchType }),
      pace: { kind: 'every', seconds: 1 },
      count: undefined,
      report: new SimulationReport({
        write: (t) => lines.push(t),
        json: false,
        perPunch: true,
        deliveredAs: 'acknowledged',
        timeZone: 'Asia/Kolkata',
      }),
      stop: stop.signal,
      giveUp: giveUp.signal,
      notice: (m) => notices.push(m),
      stopGraceMs: 600_000,
    })
    await until(() => held.held.length === 1, 'the first punch to reach the agent')
    stop.abort()
    expect(notices).toContain('stopping: waiting for 1 punch(es) in flight; Ctrl-C again gives up on them')
    return { agent, held, giveUp, lines, running }
  }

  it('on stop finishes the punch in flight: it counts once its PUBACK comes', async () => {
    const { agent, held, lines, running } = await heldRun()
    held.held[0]?.release()
    expect(await running).toEqual({ sent: 1, acknowledged: 1, failure: undefined })
    expect(lines).toEqual([expect.stringMatching(/^sent E001 IN \S+ \(acknowledged\)\n$/)])
    expect(await agent.punches()).toHaveLength(1)
  })

  it('gives up on the punch in flight when asked again, and counts it as not acknowledged', async () => {
    const { giveUp, lines, running } = await heldRun()
    giveUp.abort()
    expect(await running).toMatchObject({ sent: 1, acknowledged: 0 })
    expect(lines).toEqual([
      expect.stringMatching(/^sent E001 IN \S+ \(not acknowledged: stopped before its PUBACK came\)\n$/),
    ])
  })
})
