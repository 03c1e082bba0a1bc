/**
 * The embedded broker (docs/decisions/0024-ack-after-fsync.md) with real mqtt.js devices and a
 * real PunchIntake + Spool on disk: a QoS 1 punch is PUBACKed only once it is durable, a full spool
 * refuses it (no PUBACK) until there is room, and what cannot be read lands in dead letters.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt'
import { type Logger, pino } from 'pino'
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { type EmbeddedBrokerConfig, MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import type { PunchSink } from '../../../agent/intake/punch-sink.js'
import { formatInZone, nowMicros } from '../../../shared/time.js'
import { REQUIRE_ALL } from '../../support/services.js'
import {
  HeldSink,
  mqttDevice,
  punchPayload,
  silentLog,
  startTestAgent,
  type TestAgent,
} from './mqtt-test-agent.js'
import { makeTestCertificates, opensslSkipReason, type TestCertificates } from './mqtt-test-certificates.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Polls (no fixed sleeps); the timeout only bounds a test that would otherwise hang. */
const until = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 5 })

const GATE = mqttDevice('gate-1', 'punches/gate-1')

interface Setup {
  devices?: DeviceConfig[]
  sink?: (agent: TestAgent) => PunchSink
  config?: Partial<EmbeddedBrokerConfig>
  maxBytes?: number
  log?: Logger
}

async function setUp(options: Setup = {}) {
  const devices = options.devices ?? [GATE]
  const agent = await startTestAgent(devices, { maxBytes: options.maxBytes })
  cleanups.push(() => agent.close())
  const sink = options.sink ? options.sink(agent) : agent.intake
  const input = new MqttEmbeddedInput({
    config: { host: '127.0.0.1', port: 0, users: [], ...options.config },
    devices,
    sink,
    events: agent.events,
    log: options.log ?? silentLog,
  })
  await input.start()
  cleanups.push(() => input.stop())
  const port = input.address()?.port
  if (!port) throw new Error('no port')
  return { agent, input, port, url: `mqtt://127.0.0.1:${port}` }
}

async function device(url: string, options: IClientOptions = {}): Promise<MqttClient> {
  const client = await connectAsync(url, { reconnectPeriod: 20, ...options })
  cleanups.push(() => client.endAsync(true))
  return client
}

/** A publish whose PUBACK (or error) is recorded as it happens. */
function publish(client: MqttClient, topic: string, payload: string | Buffer, qos: 0 | 1 = 1) {
  const state = { acked: false, done: Promise.resolve() }
  state.done = new Promise<void>((resolve, reject) =>
    client.publish(topic, payload, { qos }, (err) => {
      if (err) reject(err)
      else {
        state.acked = true
        resolve()
      }
    }),
  )
  return state
}

function memoryLog() {
  const lines: { msg: string; level: number }[] = []
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  return { log, lines }
}

describe('MqttEmbeddedInput', () => {
  it('sends the PUBACK of a QoS 1 punch only once accept has resolved, with the punch on disk', async () => {
    let held: HeldSink | undefined
    const { agent, url } = await setUp({ sink: (a) => (held = new HeldSink(a.intake)) })
    const gate = await device(url)
    const other = await device(url)
    let itemsAtPuback: number | undefined
    const acked = new Promise<void>((resolve, reject) =>
      gate.publish('punches/gate-1', punchPayload(), { qos: 1 }, (err) => {
        itemsAtPuback = agent.spool.stats().items
        if (err) reject(err)
        else resolve()
      }),
    )
    await until(() => expect(held?.held).toHaveLength(1))
    // A full round trip through the broker for another client: had the broker acknowledged the held
    // punch, that PUBACK would have been written before this one.
    await other.publishAsync('elsewhere/status', 'ok', { qos: 1 })
    expect(itemsAtPuback).toBeUndefined()
    expect(await agent.punches()).toHaveLength(0)

    held?.held[0]?.release()
    await acked
    expect(itemsAtPuback).toBe(1)
    expect(await agent.punches()).toMatchObject([{ deviceId: 'gate-1', employeeCode: 'E001' }])
  })

  it('routes wildcard topics to their devices, in each device format', async () => {
    const devices = [
      GATE,
      mqttDevice('plant-2', 'plant-2/+/attlog', 'zk-attlog'),
      mqttDevice('canteen', 'canteen/#'),
    ]
    const { agent, url } = await setUp({ devices })
    const client = await device(url)
    const local = formatInZone(nowMicros() - 3_600_000_000, 'Asia/Kolkata')
      .slice(0, 19)
      .replace('T', ' ')
    await client.publishAsync('plant-2/reader-7/attlog', `E7\t${local}\t1\t1\t0\nE8\t${local}\t0\t1\t0`, {
      qos: 1,
    })
    await client.publishAsync('canteen', punchPayload('E9'), { qos: 1 })
    await client.publishAsync('canteen/counter/2', punchPayload('E10'), { qos: 1 })
    await client.publishAsync('punches/gate-1', punchPayload('E11'), { qos: 1 })
    const byDevice = (await agent.punches()).map((p) => `${p.deviceId}:${p.employeeCode}:${p.punchType}`)
    expect(byDevice.sort()).toEqual(
      ['plant-2:E7:OUT', 'plant-2:E8:IN', 'canteen:E9:IN', 'canteen:E10:IN', 'gate-1:E11:IN'].sort(),
    )
  })

  it('acknowledges a malformed payload into dead letters, and the device carries on', async () => {
    const { agent, url } = await setUp()
    const malformed: string[] = []
    agent.events.on('frameMalformed', (e) => {
      malformed.push(e.deviceId)
    })
    const gate = await device(url)
    await gate.publishAsync('punches/gate-1', '{"employeeCode": "E1", "punchType": ', { qos: 1 })
    await gate.publishAsync('punches/gate-1', Buffer.from([0xff, 0x00, 0xfe]), { qos: 1 })
    await gate.publishAsync('punches/gate-1', punchPayload('E2'), { qos: 1 })
    const dead = await agent.deadLettered()
    expect(dead.map((d) => [d.deviceId, d.reason])).toEqual([
      ['gate-1', 'malformed_frame'],
      ['gate-1', 'malformed_frame'],
    ])
    expect(dead[0]?.raw).toBe('{"employeeCode": "E1", "punchType": ')
    expect(malformed).toEqual(['gate-1', 'gate-1'])
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E2'])
  })

  it('refuses a full spool: no PUBACK, one alarm, and the resent punch is stored once there is room', async () => {
    const { log, lines } = memoryLog()
    // Any punch fills a one-byte spool: the first is taken (the spool was empty), the next refused.
    const { agent, url } = await setUp({ maxBytes: 1, log })
    let refusals = 0
    agent.events.on('spoolFull', () => {
      refusals++
    })
    const gate = await device(url)
    await gate.publishAsync('punches/gate-1', punchPayload('E1'), { qos: 1 })

    const second = publish(gate, 'punches/gate-1', punchPayload('E2'))
    // Each refusal closes the connection; mqtt.js reconnects and resends the unacknowledged PUBLISH.
    await until(() => expect(refusals).toBeGreaterThanOrEqual(3))
    expect(second.acked).toBe(false)
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E1'])

    // The forwarder delivers the first chunk and removes it: there is room again.
    await agent.spool.remove([...agent.spool.pending()])
    await second.done
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E2'])
    expect(lines.filter((l) => l.msg.startsWith('ALARM: spool full'))).toHaveLength(1)
    expect(lines.filter((l) => l.msg.startsWith('spool has room again'))).toHaveLength(1)
  })

  it('acknowledges punches in the order they arrived (MQTT 3.1.1 §4.6) when accepts finish out of order', async () => {
    let held: HeldSink | undefined
    const { port } = await setUp({ sink: (a) => (held = new HeldSink(a.intake)) })
    const socket = net.connect(port, '127.0.0.1')
    cleanups.push(async () => socket.destroy())
    const received: Buffer[] = []
    socket.on('data', (data) => received.push(data))
    // One write, so the broker reads both PUBLISHes in one batch and authorizes them concurrently.
    socket.write(
      Buffer.concat([
        connectPacket('order-test'),
        publishPacket('punches/gate-1', 1, punchPayload('E1')),
        publishPacket('punches/gate-1', 2, punchPayload('E2')),
      ]),
    )
    await until(() => expect(held?.held).toHaveLength(2))
    held?.held[1]?.release()
    held?.held[0]?.release()
    const pubacks = () => {
      const all = Buffer.concat(received)
      const ids: number[] = []
      // CONNACK (4 bytes) then PUBACKs: 0x40 0x02 msb lsb.
      for (let i = 4; i + 4 <= all.length; i += 4) if (all[i] === 0x40) ids.push(all.readUInt16BE(i + 2))
      return ids
    }
    await until(() => expect(pubacks()).toHaveLength(2))
    expect(pubacks()).toEqual([1, 2])
  })

  it('acknowledges topics no device has without storing them, and keeps punch topics private', async () => {
    const { log, lines } = memoryLog()
    const { agent, url } = await setUp({ log })
    const client = await device(url)
    await client.publishAsync('punches/unknown-gate', punchPayload(), { qos: 1 })
    await client.publishAsync('punches/unknown-gate', punchPayload(), { qos: 1 })
    expect(await agent.punches()).toHaveLength(0)
    expect(await agent.deadLettered()).toHaveLength(0)
    expect(lines.filter((l) => l.msg.startsWith('message on a topic no device'))).toHaveLength(1)

    // mqtt.js rejects a SUBACK holding a refusal, and carries the SUBACK on the error.
    const suback = await client.subscribeAsync(['punches/#', '#', 'commands/gate-1'], { qos: 1 }).then(
      () => undefined,
      (err: { packet?: { granted?: number[] } }) => err.packet?.granted,
    )
    expect(suback).toEqual([0x80, 0x80, 1])
  })

  it('stores a retained punch once, without retaining it', async () => {
    const { agent, url } = await setUp()
    const client = await device(url)
    await client.publishAsync('punches/gate-1', punchPayload('E5'), { qos: 1, retain: true })
    // An empty retained payload clears a retained message: acknowledged, nothing to store.
    await client.publishAsync('punches/gate-1', '', { qos: 1, retain: true })
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E5'])
    expect(await agent.deadLettered()).toHaveLength(0)
  })

  it('stores QoS 0 punches and warns once that QoS 1 is needed', async () => {
    const { log, lines } = memoryLog()
    const { agent, url } = await setUp({ log })
    const gate = await device(url)
    gate.publish('punches/gate-1', punchPayload('E1'), { qos: 0 })
    gate.publish('punches/gate-1', punchPayload('E2'), { qos: 0 })
    await until(async () => expect(await agent.punches()).toHaveLength(2))
    expect(lines.filter((l) => l.msg.includes('QoS 0'))).toHaveLength(1)
  })

  it('reports devices connected while a client publishes for them, disconnected when it leaves', async () => {
    const devices = [GATE, mqttDevice('main-door', 'doors/main')]
    const { agent, url } = await setUp({ devices })
    expect(agent.deviceStates.map((s) => [s.deviceId, s.state])).toEqual([
      ['gate-1', 'waiting'],
      ['main-door', 'waiting'],
    ])
    // Known by its username or clientId as soon as it connects; by its topic once it publishes.
    const gate = await connectAsync(url, { clientId: 'gate-1', reconnectPeriod: 0 })
    const door = await connectAsync(url, { clientId: 'door-controller', reconnectPeriod: 0 })
    await door.publishAsync('doors/main', punchPayload(), { qos: 1 })
    await gate.publishAsync('punches/gate-1', punchPayload(), { qos: 1 })
    await gate.endAsync()
    await door.endAsync()
    await until(() => expect(agent.deviceStates).toHaveLength(6))
    expect(agent.deviceStates.slice(2).map((s) => [s.deviceId, s.state])).toEqual([
      ['gate-1', 'connected'],
      ['main-door', 'connected'],
      ['gate-1', 'disconnected'],
      ['main-door', 'disconnected'],
    ])
  })

  it('lets a punch being stored get its PUBACK when stopped, then stops listening', async () => {
    let held: HeldSink | undefined
    const { agent, input, url } = await setUp({ sink: (a) => (held = new HeldSink(a.intake)) })
    const gate = await device(url, { reconnectPeriod: 0 })
    const first = publish(gate, 'punches/gate-1', punchPayload('E1'))
    await until(() => expect(held?.held).toHaveLength(1))
    const stopped = input.stop()
    held?.held[0]?.release()
    await first.done
    await stopped
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E1'])
    await expect(connectAsync(url, { reconnectPeriod: 0 }, false)).rejects.toThrow()
  })
})

describe('MqttEmbeddedInput authentication', () => {
  const users = [
    { username: 'gate-1', password: 'correct horse' },
    { username: 'gate-2', password: 'battery staple' },
  ]

  it('lets a configured user in and refuses wrong, missing and unknown credentials (CONNACK 5)', async () => {
    const { agent, url } = await setUp({ config: { users } })
    const refused = (options: IClientOptions) => connectAsync(url, { ...options, reconnectPeriod: 0 }, false)
    await expect(refused({ username: 'gate-1', password: 'battery staple' })).rejects.toThrow(
      /Not authorized/,
    )
    await expect(refused({ username: 'gate-1', password: 'correct horse!' })).rejects.toThrow(
      /Not authorized/,
    )
    await expect(refused({ username: 'gate-9', password: 'correct horse' })).rejects.toThrow(/Not authorized/)
    await expect(refused({})).rejects.toThrow(/Not authorized/)
    await expect(refused({ username: 'gate-1' })).rejects.toThrow(/Not authorized/)

    const gate = await device(url, { username: 'gate-1', password: 'correct horse' })
    await gate.publishAsync('punches/gate-1', punchPayload(), { qos: 1 })
    expect(await agent.punches()).toHaveLength(1)
  })
})

const openssl = await opensslSkipReason()
if (openssl && REQUIRE_ALL) throw new Error(`HAJRI_TEST_REQUIRE_ALL=1 but ${openssl}`)
if (openssl) console.warn(`skipping embedded broker TLS tests: ${openssl}`)

describe.skipIf(openssl !== undefined)('MqttEmbeddedInput over TLS', () => {
  let certs: TestCertificates
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-mqtt-tls-'))
    certs = await makeTestCertificates(dir)
    return () => rm(dir, { recursive: true, force: true })
  })

  it('serves mqtts with the configured certificate', async () => {
    const { agent, port } = await setUp({
      config: { tls: { certFile: certs.serverCertFile, keyFile: certs.serverKeyFile } },
    })
    const ca = await readFile(certs.caFile)
    const gate = await device(`mqtts://127.0.0.1:${port}`, { ca })
    await gate.publishAsync('punches/gate-1', punchPayload(), { qos: 1 })
    expect(await agent.punches()).toHaveLength(1)
    // A plain MQTT client gets no CONNACK from a TLS listener.
    await expect(
      connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 2_000 }, false),
    ).rejects.toThrow()
  })

  it('with caFile, requires a client certificate signed by it', async () => {
    const { agent, port } = await setUp({
      config: {
        tls: { certFile: certs.serverCertFile, keyFile: certs.serverKeyFile, caFile: certs.caFile },
      },
    })
    const url = `mqtts://127.0.0.1:${port}`
    const ca = await readFile(certs.caFile)
    await expect(connectAsync(url, { ca, reconnectPeriod: 0 }, false)).rejects.toThrow()
    const gate = await device(url, {
      ca,
      cert: await readFile(certs.clientCertFile),
      key: await readFile(certs.clientKeyFile),
    })
    await gate.publishAsync('punches/gate-1', punchPayload(), { qos: 1 })
    expect(await agent.punches()).toHaveLength(1)
  })
})

/** MQTT 3.1.1 §3.1 CONNECT, clean session, no credentials, keep alive 60 s. */
function connectPacket(clientId: string): Buffer {
  const id = Buffer.from(clientId)
  const body = Buffer.concat([
    Buffer.from([0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c]),
    Buffer.from([id.length >> 8, id.length & 0xff]),
    id,
  ])
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body])
}

/** MQTT 3.1.1 §3.3 PUBLISH at QoS 1. */
function publishPacket(topic: string, messageId: number, payload: string): Buffer {
  const name = Buffer.from(topic)
  const body = Buffer.concat([
    Buffer.from([name.length >> 8, name.length & 0xff]),
    name,
    Buffer.from([messageId >> 8, messageId & 0xff]),
    Buffer.from(payload),
  ])
  return Buffer.concat([Buffer.from([0x32]), remainingLength(body.length), body])
}

/** MQTT 3.1.1 §2.2.3 variable-length encoding. */
function remainingLength(length: number): Buffer {
  const bytes: number[] = []
  let rest = length
  do {
    let byte = rest % 128
    rest = Math.floor(rest / 128)
    if (rest > 0) byte |= 0x80
    bytes.push(byte)
  } while (rest > 0)
  return Buffer.from(bytes)
}
