/**
 * Fuzzing: MQTT below the payload, on a raw socket into the embedded broker. A device
 * connects properly, then sends PUBLISH packets a client library would never make (wildcards, NUL,
 * `$SYS` and empty topics, QoS 2, packet id 0, retain, DUP) and packets with bytes changed or cut
 * off. Whatever arrives: the agent does not crash (no uncaught exception, no unhandled rejection),
 * only the offending connection is closed, a punch is stored only from a topic a device owns (never
 * from a wildcard, which MQTT 3.1.1 §3.3.2-2 forbids in a PUBLISH), and a well-behaved device that
 * stays connected throughout still gets its punches stored and acknowledged.
 * Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import { connect as connectTcp, type Socket } from 'node:net'
import fc from 'fast-check'
import { connectAsync, type MqttClient } from 'mqtt'
import mqttPacket from 'mqtt-packet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import { punchPayload, silentLog, startTestAgent, type TestAgent } from './mqtt-test-agent.js'

const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
const DEVICES: DeviceConfig[] = [
  { id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } },
  { id: 'plant', mqtt: { topic: 'plant/+', format: 'json' } },
] as DeviceConfig[]

const topic = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('punches/gate-1', 'plant/reader-1') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'plant/+',
      'plant/#',
      'punches/#',
      '#',
      '+',
      'punches/+',
      '',
      '/',
      'plant/',
      'plant//x',
      'punches/gate-1\u0000x',
      'punches/gate-1/',
      '$SYS/broker',
      'plant/reader-1\ud800',
      `plant/${'r'.repeat(70_000)}`,
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
)

const publish = fc.record({
  cmd: fc.constant('publish' as const),
  topic,
  payload: fc.oneof(
    fc.constant(punchPayload('E7')).map((p) => Buffer.from(p)),
    fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
  ),
  qos: fc.constantFrom(0, 1, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
  messageId: fc.oneof(fc.integer({ min: 1, max: 65_535 }), fc.constant(0)),
  retain: fc.boolean(),
  dup: fc.boolean(),
})

/** What goes on the wire after CONNECT: a packet as generated, or its bytes changed or cut. */
const wire = fc.oneof(
  { weight: 3, arbitrary: publish.map((p) => mqttPacket.generate(p)) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        publish,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      )
      .map(([p, edits]) => {
        const bytes = Buffer.from(mqttPacket.generate(p))
        for (const [at, value] of edits) bytes[at % bytes.length] = value
        return bytes
      }),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(publish, fc.nat()).map(([p, cut]) => {
      const bytes = mqttPacket.generate(p)
      return bytes.subarray(0, cut % bytes.length)
    }),
  },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)) },
)

describe('MqttEmbeddedInput under malformed MQTT packets', () => {
  let agent: TestAgent
  let input: MqttEmbeddedInput
  let port: number
  let steady: MqttClient
  const crashes: unknown[] = []
  const onCrash = (err: unknown) => crashes.push(err)
  let steadyCloses = 0

  beforeAll(async () => {
    process.on('uncaughtException', onCrash)
    process.on('unhandledRejection', onCrash)
    agent = await startTestAgent(DEVICES)
    input = new MqttEmbeddedInput({
      config: { host: '127.0.0.1', port: 0, users: [] },
      devices: DEVICES,
      sink: agent.intake,
      events: agent.events,
      log: silentLog,
    })
    await input.start()
    port = input.address()?.port as number
    steady = await connectAsync(`mqtt://127.0.0.1:${port}`, { reconnectPeriod: 0, clientId: 'steady' })
    steady.on('close', () => steadyCloses++)
  })

  afterAll(async () => {
    await steady?.endAsync()
    await input?.stop()
    await agent?.close()
    process.off('uncaughtException', onCrash)
    process.off('unhandledRejection', onCrash)
  })

  /** A raw connection that has said CONNECT; resolves once the broker's CONNACK is in. */
  async function rawDevice(clientId: string): Promise<{ socket: Socket; closed: Promise<void> }> {
    const socket = connectTcp(port, '127.0.0.1')
    socket.on('error', () => {})
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve())
      socket.once('error', reject)
    })
    const connack = new Promise<void>((resolve) => socket.once('data', () => resolve()))
    socket.write(
      mqttPacket.generate({
        cmd: 'connect',
        protocolId: 'MQTT',
        protocolVersion: 4,
        clientId,
        clean: true,
        keepalive: 0,
      }),
    )
    await connack
    return { socket, closed }
  }

  it('never crashes, and keeps serving a well-behaved device', async () => {
    let run = 0
    /** Runs in which a raw packet got a punch or dead letter in: the fuzz reached the intake. */
    let reached = 0
    await fc.assert(
      fc.asyncProperty(fc.array(wire, { minLength: 1, maxLength: 4 }), async (packets) => {
        const start = agent.spool.stats().items + agent.deadLetters.count()
        const { socket, closed } = await rawDevice(`raw-${++run}`)
        for (const bytes of packets) socket.write(bytes)
        // Then the connection ends; the broker must have dealt with whatever it got by the time
        // the well-behaved device's next punch is acknowledged (one event loop, in order).
        socket.end()
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000))])
        socket.destroy()

        const before = agent.spool.stats().items
        await steady.publishAsync('punches/gate-1', punchPayload('E42'), { qos: 1 })
        expect(agent.spool.stats().items).toBeGreaterThan(before)
        // More than the well-behaved device's punch: a raw packet got in too (its store may finish
        // after its connection closed, but not after a later punch's: the spool appends in order).
        if (agent.spool.stats().items + agent.deadLetters.count() > start + 1) reached++
        expect(crashes).toEqual([])
      }),
      { numRuns: 300, seed: SEED },
    )
    expect(steadyCloses, 'the well-behaved device stayed connected').toBe(0)
    expect(reached, 'some raw packets were read as punches').toBeGreaterThan(0)
  })

  const wildcards = ['plant/+', 'plant/#', 'punches/#', 'punches/+', '#', '+', 'plant/+/x']
  for (const [index, wildcard] of wildcards.entries()) {
    it(`stores nothing published to the wildcard topic "${wildcard}"`, async () => {
      // Its own employee code, so what the fuzz above left in flight cannot be mistaken for it.
      const code = `WILD${index}`
      const { socket, closed } = await rawDevice(`wildcard-${index}`)
      const answered = new Promise<string>((resolve) => {
        socket.on('data', (data: Buffer) => resolve((data[0] ?? 0) >> 4 === 4 ? 'puback' : 'other'))
        void closed.then(() => resolve('closed'))
      })
      socket.write(
        mqttPacket.generate({
          cmd: 'publish',
          topic: wildcard,
          payload: punchPayload(code),
          qos: 1,
          messageId: 7,
          retain: false,
          dup: false,
        }),
      )
      // MQTT 3.1.1 §3.3.2-2: a wildcard in a PUBLISH topic is a protocol violation; the
      // connection is closed. Either way, nothing is taken from it.
      expect(await answered).toBe('closed')
      socket.destroy()
      // A later punch acknowledged means anything the wildcard packet started is stored by now
      // (the spool appends in order); dead letters are waited for on their own.
      await steady.publishAsync('punches/gate-1', punchPayload('E42'), { qos: 1 })
      await agent.deadLetters.drain()
      const mentions = (value: unknown) => JSON.stringify(value).includes(code)
      expect((await agent.punches()).filter(mentions)).toEqual([])
      expect((await agent.deadLettered()).filter(mentions)).toEqual([])
      expect(crashes).toEqual([])
    })
  }
})
