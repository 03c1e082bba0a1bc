/**
 * ZK terminals through the whole agent: a real Gateway with its real inputs reads the terminal
 * emulator over port 4370, its punches go through the intake and the spool to a real cloud, and IT
 * staff's `devices set-time` and `devices clear-log` reach the terminal through the control API.
 * clear-log is the one way the agent ever changes a log, so what it checks first is shown here:
 * nothing of the device may be waiting in the spool or sitting in dead letters.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { loadAgentConfig } from '../../agent/config/load.js'
import { Gateway } from '../../agent/gateway.js'
import { createInputs } from '../../agent/inputs/create-inputs.js'
import { runAgentCli } from '../../agent/main.js'
import { ZK_CMD } from '../../agent/simulator/zk-device/zk-commands.js'
import { ZkDevice } from '../../agent/simulator/zk-device/zk-device.js'
import { parseTimestamp } from '../../shared/time.js'
import { captureCli } from '../support/cli-capture.js'
import { employee, TEST_ACTOR, TestCloud } from '../support/cloud-harness.js'
import { freePort, waitFor } from '../support/e2e-kit.js'

const cloud = new TestCloud('sqlite')
let cloudUrl: string
let tenantId: string
let clientId: string
let clientSecret: string

beforeAll(async () => {
  await cloud.start()
  cloudUrl = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
  tenantId = await cloud.createTenant()
  await cloud.upsertEmployees(
    tenantId,
    ['E0001', 'E0002', 'E0003', 'E0004'].map((code) => employee(code)),
  )
  const app = await cloud.services.oauthApps.create(
    tenantId,
    { name: 'agent', scopes: ['attendance:write'], rateLimitPerMinute: 100_000 },
    TEST_ACTOR,
  )
  clientId = app.clientId
  clientSecret = app.clientSecret
})
afterAll(() => cloud.stop())

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A terminal with E0001..E0004 enrolled as PINs 1..4 (the site's PIN rule makes them codes). */
async function startTerminal(): Promise<ZkDevice> {
  const device = new ZkDevice({ serialNumber: 'CEXJ201260001', platform: 'ZMM220_TFT', recordCapacity: 1000 })
  await device.start()
  cleanups.push(() => device.stop())
  return device
}

/** The agent as IT staff run it, from a YAML file, with the terminal as its one device. */
async function startAgent(device: ZkDevice, options: { cloudUp: boolean }) {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-gateway-zk-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const statusPort = await freePort()
  const configFile = join(dir, 'agent.yaml')
  await writeFile(
    configFile,
    stringify({
      site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', pin: { prefix: 'E', width: 4 } },
      cloud: {
        url: options.cloudUp ? cloudUrl : `http://127.0.0.1:${await freePort()}`,
        clientId,
        clientSecret,
      },
      spool: { dir: join(dir, 'spool') },
      status: { listen: `127.0.0.1:${statusPort}` },
      log: { level: 'silent' },
      devices: [
        {
          id: 'gate-zk',
          zk: { host: '127.0.0.1', port: device.port, transport: 'tcp', pollEvery: '10s', timeoutSeconds: 2 },
        },
      ],
    }),
  )
  const config = await loadAgentConfig(configFile, {})
  const gateway = new Gateway(config, { log: pino({ level: 'silent' }), createInputs })
  await gateway.start()
  cleanups.push(() => gateway.stop())
  const cli = (...args: string[]) =>
    captureCli(runAgentCli, [...args, '--config', configFile], { env: {}, cwd: dir })
  return { gateway, statusUrl: `http://127.0.0.1:${statusPort}`, cli }
}

/** Punches at 09:0x in Pune, as the terminal's clock (in the site's zone) writes them. */
function punchAt(device: ZkDevice, pin: number, minute: number, state: number) {
  device.punch({ userId: String(pin), time: `2026-11-26T09:0${minute}:00`, state })
}

describe('ZK terminals through the agent', () => {
  it('stores every punch in the cloud once, with the PIN rule, the zone and the status codes, and reports the terminal', async () => {
    const device = await startTerminal()
    punchAt(device, 1, 0, 0)
    punchAt(device, 2, 1, 1)
    const agent = await startAgent(device, { cloudUp: true })
    punchAt(device, 3, 2, 0)
    const stored = async () =>
      (
        await cloud.services.punches.list(
          { id: tenantId, timeZone: 'Asia/Kolkata', backfillDays: 365 },
          { limit: 100 },
        )
      ).data
    const punches = await waitFor(async () => {
      const data = await stored()
      return data.length >= 3 ? data : undefined
    }, 'three punches in the cloud')
    expect(punches.map((p) => [p.employeeCode, p.punchType, parseTimestamp(p.punchedAt)]).sort()).toEqual([
      ['E0001', 'IN', parseTimestamp('2026-11-26T09:00:00+05:30')],
      ['E0002', 'OUT', parseTimestamp('2026-11-26T09:01:00+05:30')],
      ['E0003', 'IN', parseTimestamp('2026-11-26T09:02:00+05:30')],
    ])
    const terminal = agent.gateway.status().devices.find((d) => d.id === 'gate-zk')
    expect(terminal).toMatchObject({
      transports: ['zk'],
      state: 'connected',
      details: {
        protocol: 'zk',
        serialNumber: 'CEXJ201260001',
        model: 'ZMM220_TFT',
        counts: { attendanceRecords: 3, attendanceCapacity: 1000 },
        pull: { recordsRead: 3, connectionErrors: 0, lastError: null, notices: [] },
      },
    })
    const metrics = await (await fetch(`${agent.statusUrl}/metrics`)).text()
    expect(metrics).toMatch(/^hajri_agent_device_up\{device="gate-zk"\} 1$/m)
    expect(metrics).toMatch(/^hajri_agent_device_attendance_records\{device="gate-zk"\} 3$/m)
    expect(metrics).toMatch(/^hajri_agent_device_last_read_timestamp_seconds\{device="gate-zk"\} \d+/m)
    expect(metrics).toMatch(/^hajri_agent_device_clock_skew_seconds\{device="gate-zk"\} -?\d+$/m)
    expect(device.commands).not.toContain(ZK_CMD.CMD_CLEAR_ATTLOG)
  })

  it('refuses to clear a log whose punches wait for the cloud, and leaves the terminal as it was', async () => {
    const device = await startTerminal()
    punchAt(device, 1, 0, 0)
    punchAt(device, 2, 1, 1)
    const agent = await startAgent(device, { cloudUp: false })
    await waitFor(() => agent.gateway.spool.stats().items === 2, 'the punches in the spool')
    const refused = await agent.cli('devices', 'clear-log', 'gate-zk')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/2 of its punches are still waiting in the spool/)
    expect(device.recordCount).toBe(2)
    expect(device.commands).not.toContain(ZK_CMD.CMD_CLEAR_ATTLOG)
    expect(device.disabled).toBe(false)
    // Nothing else takes the command: a device that is not a ZK terminal, or none at all.
    expect((await agent.cli('devices', 'clear-log', 'nowhere')).stderr).toMatch(/no device nowhere/)
    expect((await agent.cli('devices', 'clear-log')).code).toBe(2)
  })

  it('refuses while a punch of the terminal is in dead letters, and clears once every punch is in the cloud', async () => {
    const device = await startTerminal()
    punchAt(device, 1, 0, 0)
    // PIN 9 is E0009, whom the cloud does not know: refused, and kept in dead letters.
    punchAt(device, 9, 1, 0)
    const agent = await startAgent(device, { cloudUp: true })
    await waitFor(() => agent.gateway.deadLetters.count() === 1, 'the unknown employee in dead letters')
    await waitFor(() => agent.gateway.spool.stats().items === 0, 'the spool drained')
    const refused = await agent.cli('devices', 'clear-log', 'gate-zk')
    expect(refused.stderr).toMatch(/it has records in dead letters.*--accept-dead-letters/)
    expect(device.recordCount).toBe(2)
    // The employee is added and the dead letter replayed: now every punch is in the cloud.
    await cloud.upsertEmployees(tenantId, [employee('E0009')])
    expect((await agent.cli('dead-letters', 'replay')).code).toBe(0)
    await waitFor(
      async () => agent.gateway.deadLetters.count() === 0 && agent.gateway.spool.stats().items === 0,
      'the replayed punch in the cloud',
    )
    const cleared = await agent.cli('devices', 'clear-log', 'gate-zk', '--json')
    expect(cleared.code, cleared.stderr).toBe(0)
    expect(JSON.parse(cleared.stdout)).toEqual({ cleared: 2 })
    expect(device.recordCount).toBe(0)
    expect(device.disabled).toBe(false)
    // The agent goes on from the cleared log's start: the next punch reaches the cloud.
    punchAt(device, 4, 5, 0)
    await waitFor(
      async () =>
        (
          await cloud.services.punches.list(
            { id: tenantId, timeZone: 'Asia/Kolkata', backfillDays: 365 },
            { limit: 100, employeeCode: 'E0004' },
          )
        ).data.length === 1,
      'the punch made after the clear, in the cloud',
    )
  }, 60_000)

  it("sets the terminal's clock from the agent's on request", async () => {
    const device = await startTerminal()
    device.clock.set('2024-01-01T00:00:00')
    const agent = await startAgent(device, { cloudUp: false })
    await waitFor(
      () => agent.gateway.status().alarms.find((a) => a.includes('its clock is')),
      'the clock alarm',
    )
    const set = await agent.cli('devices', 'set-time', 'gate-zk', '--json')
    expect(set.code, set.stderr).toBe(0)
    const result = JSON.parse(set.stdout) as { deviceTime: string; skewSeconds: number }
    expect(Math.abs(result.skewSeconds)).toBeLessThan(120)
    // The terminal keeps Pune's wall time, which is what the agent set.
    expect(Math.abs(Date.parse(`${result.deviceTime}+05:30`) - Date.now())).toBeLessThan(120_000)
    expect(device.commands).toContain(ZK_CMD.CMD_SET_TIME)
  })
})
