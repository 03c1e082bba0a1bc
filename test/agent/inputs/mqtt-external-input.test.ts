/**
 * The agent as a client of the site's broker (tested with
 * the real Mosquitto in external mode). A persistent session keeps punches while the agent is away;
 * a punch whose accept fails is not acknowledged and comes back after a reconnect; everything ends
 * up in the spool once. Each run uses its own topics and clientIds, and removes its sessions and
 * retained messages, because the broker is shared and persistent.
 */
import net from 'node:net'
import { Aedes } from 'aedes'
import { connectAsync, type MqttClient } from 'mqtt'
import { type Logger, pino } from 'pino'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { MqttExternalInput } from '../../../agent/inputs/mqtt-external-input.js'
import type { PunchSink } from '../../../agent/intake/punch-sink.js'
import { SpoolFullError } from '../../../agent/spool/spool.js'
import { MOSQUITTO_URL, mosquittoAvailability } from '../../support/services.js'
import { unusedPort } from '../../support/unused-port.js'
import {
  HeldSink,
  mqttDevice,
  punchPayload,
  RefusingSink,
  silentLog,
  startTestAgent,
  type TestAgent,
  uniqueName,
} from './mqtt-test-agent.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Polls (no fixed sleeps); the timeout only bounds a test that would otherwise hang. */
const until = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 10 })

/** Fast reconnects for tests; production waits 1 s doubling to 60 s. */
const FAST = { initialMs: 20, maxMs: 200 }

function startInput(options: {
  url: string
  clientId: string
  devices: DeviceConfig[]
  agent: TestAgent
  sink?: PunchSink
  log?: Logger
}): MqttExternalInput {
  const input = new MqttExternalInput({
    config: { url: options.url, clientId: options.clientId },
    devices: options.devices,
    sink: options.sink ?? options.agent.intake,
    events: options.agent.events,
    log: options.log ?? silentLog,
    reconnect: FAST,
  })
  return input
}

/** Resolves when every device has been reported connected (its subscription granted) `times` times. */
function connected(agent: TestAgent, devices: DeviceConfig[], times = 1) {
  return until(() => {
    for (const { id } of devices) {
      const count = agent.deviceStates.filter((s) => s.deviceId === id && s.state === 'connected').length
      expect(count, `${id} connected`).toBeGreaterThanOrEqual(times)
    }
  })
}

const mosquitto = await mosquittoAvailability()

describe.skipIf(mosquitto.skipReason !== undefined)('MqttExternalInput with Mosquitto', () => {
  async function scenario() {
    const base = uniqueName('hajri-test')
    const devices = [mqttDevice('gate-1', `${base}/punches/gate-1`), mqttDevice('plant', `${base}/plant/+`)]
    const clientId = uniqueName('hajri-agent')
    const agent = await startTestAgent(devices)
    cleanups.push(() => agent.close())
    // The broker keeps a persistent session and retained messages across restarts: remove both.
    cleanups.push(async () => {
      const cleaner = await connectAsync(MOSQUITTO_URL, { clientId, clean: true, reconnectPeriod: 0 })
      await cleaner.endAsync()
    })
    const publisher = await connectAsync(MOSQUITTO_URL, {
      clientId: uniqueName('device'),
      reconnectPeriod: 0,
    })
    cleanups.push(() => publisher.endAsync())
    return { base, devices, clientId, agent, publisher }
  }

  async function publishAll(publisher: MqttClient, topic: string, payloads: string[]) {
    for (const payload of payloads) await publisher.publishAsync(topic, payload, { qos: 1 })
  }

  it('stores punches from wildcard topics, and those published while it was stopped (persistent session)', async () => {
    const { base, devices, clientId, agent, publisher } = await scenario()
    const first = startInput({ url: MOSQUITTO_URL, clientId, devices, agent })
    await first.start()
    cleanups.push(() => first.stop())
    await connected(agent, devices)

    const before = [punchPayload('E1'), punchPayload('E2')]
    await publishAll(publisher, `${base}/punches/gate-1`, before)
    await publisher.publishAsync(`${base}/plant/reader-3`, punchPayload('E3'), { qos: 1 })
    await until(async () => expect(await agent.punches()).toHaveLength(3))
    await first.stop()
    expect(agent.deviceStates.at(-1)).toMatchObject({ state: 'disconnected' })

    // The agent is down: the broker queues these for its session.
    const during = [punchPayload('E4'), punchPayload('E5'), punchPayload('E6')]
    await publishAll(publisher, `${base}/punches/gate-1`, during)

    const second = startInput({ url: MOSQUITTO_URL, clientId, devices, agent })
    await second.start()
    cleanups.push(() => second.stop())
    await until(async () => expect(await agent.punches()).toHaveLength(6))
    const punches = await agent.punches()
    expect(punches.map((p) => `${p.deviceId}:${p.employeeCode}`)).toEqual([
      'gate-1:E1',
      'gate-1:E2',
      'plant:E3',
      'gate-1:E4',
      'gate-1:E5',
      'gate-1:E6',
    ])
    expect(new Set(punches.map((p) => p.id)).size).toBe(6)
  })

  it('does not acknowledge a punch whose accept fails: the broker resends it and it is stored once', async () => {
    const { base, devices, clientId, agent, publisher } = await scenario()
    const lines: { msg: string }[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    const payloads = [punchPayload('E1'), punchPayload('E2'), punchPayload('E3'), punchPayload('E4')]
    // E2 is refused twice, as a full spool would: the agent must drop the connection unacknowledged.
    let refusalsLeft = 2
    const sink = new RefusingSink(agent.intake, (frame) =>
      frame === payloads[1] && refusalsLeft-- > 0 ? new SpoolFullError('cap') : undefined,
    )
    const input = startInput({ url: MOSQUITTO_URL, clientId, devices, agent, sink, log })
    await input.start()
    cleanups.push(() => input.stop())
    await connected(agent, devices)

    await publishAll(publisher, `${base}/punches/gate-1`, payloads)
    await until(async () => expect(await agent.punches()).toHaveLength(4))
    const punches = await agent.punches()
    expect(punches.map((p) => p.employeeCode).sort()).toEqual(['E1', 'E2', 'E3', 'E4'])
    expect(new Set(punches.map((p) => p.id)).size).toBe(4)
    expect(sink.calls.filter((c) => c.frame === payloads[1]).map((c) => c.refused)).toEqual([
      true,
      true,
      false,
    ])
    // One alarm for the episode, one all-clear, and a new connection (resuming the session) after
    // each refusal: the first connection and one per refusal.
    expect(lines.filter((l) => l.msg.startsWith('ALARM: spool full'))).toHaveLength(1)
    expect(lines.filter((l) => l.msg.startsWith('spool has room again'))).toHaveLength(1)
    expect(lines.filter((l) => l.msg === 'connected to the site MQTT broker, session resumed')).toHaveLength(
      2,
    )
  })

  it('does not store the retained copy of a punch again when it resubscribes', async () => {
    const { base, devices, clientId, agent, publisher } = await scenario()
    const topic = `${base}/punches/gate-1`
    cleanups.push(() => publisher.publishAsync(topic, '', { qos: 1, retain: true }))
    const input = startInput({ url: MOSQUITTO_URL, clientId, devices, agent })
    await input.start()
    cleanups.push(() => input.stop())
    await connected(agent, devices)
    await publisher.publishAsync(topic, punchPayload('E1'), { qos: 1, retain: true })
    await until(async () => expect(await agent.punches()).toHaveLength(1))

    await input.stop()
    const again = startInput({ url: MOSQUITTO_URL, clientId, devices, agent })
    await again.start()
    cleanups.push(() => again.stop())
    await connected(agent, devices, 2)
    // A live punch after the resubscription: once it is in, the retained copy (sent before it, on
    // SUBSCRIBE) has been seen and skipped.
    await publisher.publishAsync(topic, punchPayload('E2'), { qos: 1 })
    await until(async () => expect(await agent.punches()).toHaveLength(2))
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E1', 'E2'])
  })
})

describe('MqttExternalInput with aedes as the site broker', () => {
  async function siteBroker(port = 0) {
    const broker = new Aedes()
    await broker.listen()
    const server = net.createServer(broker.handle)
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    cleanups.push(async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()))
      await new Promise<void>((resolve) => server.close(() => resolve()))
    })
    const address = server.address()
    if (!address || typeof address !== 'object') throw new Error('no port')
    return { broker, url: `mqtt://127.0.0.1:${address.port}` }
  }

  it('sends its PUBACK to the broker only once accept has resolved', async () => {
    const devices = [mqttDevice('gate-1', 'punches/gate-1')]
    const agent = await startTestAgent(devices)
    cleanups.push(() => agent.close())
    const { broker, url } = await siteBroker()
    const acks: string[] = []
    broker.on('ack', (packet, client) => {
      if (client.id === 'agent-1' && packet && 'payload' in packet) acks.push(String(packet.payload))
    })
    const held = new HeldSink(agent.intake)
    const input = startInput({ url, clientId: 'agent-1', devices, agent, sink: held })
    await input.start()
    cleanups.push(() => input.stop())
    await connected(agent, devices)

    const device = await connectAsync(url, { reconnectPeriod: 0 })
    cleanups.push(() => device.endAsync())
    const payload = punchPayload('E1')
    await device.publishAsync('punches/gate-1', payload, { qos: 1 })
    await until(() => expect(held.held).toHaveLength(1))
    // A round trip through the broker before looking: time for a premature PUBACK to show up.
    await device.publishAsync('elsewhere', 'x', { qos: 1 })
    expect(acks).toEqual([])
    expect(await agent.punches()).toHaveLength(0)

    held.held[0]?.release()
    await until(() => expect(acks).toEqual([payload]))
    expect(await agent.punches()).toHaveLength(1)
  })

  it('keeps reconnecting until the broker is there, then subscribes and stores punches', async () => {
    const devices = [mqttDevice('gate-1', 'punches/gate-1')]
    const agent = await startTestAgent(devices)
    cleanups.push(() => agent.close())
    const port = await unusedPort()
    const lines: { msg: string }[] = []
    const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    const input = startInput({ url: `mqtt://127.0.0.1:${port}`, clientId: 'agent-1', devices, agent, log })
    await input.start()
    cleanups.push(() => input.stop())
    await until(() => expect(lines.filter((l) => l.msg === 'reconnecting later').length).toBeGreaterThan(2))
    expect(agent.deviceStates.map((s) => s.state)).toEqual(['waiting'])

    // The broker comes up (an in-process aedes on the port the agent keeps trying).
    await siteBroker(port)
    await connected(agent, devices)
    const device = await connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0 })
    cleanups.push(() => device.endAsync())
    await device.publishAsync('punches/gate-1', punchPayload('E1'), { qos: 1 })
    await until(async () => expect(await agent.punches()).toHaveLength(1))
  })
})
