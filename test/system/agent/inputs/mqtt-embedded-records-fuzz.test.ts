/**
 * Fuzzing: MQTT payloads, through the embedded broker (a real mqtt.js device, aedes, a real
 * PunchIntake over a Spool and DeadLetters), checked for what they leave stored: every punch
 * spooled from any payload is one the cloud takes on its shape, and every dead letter is well
 * formed (spooled-record-checks.ts). The payloads are near-valid punches, the kind a device's
 * firmware gets almost right: times in every RFC 3339 spelling and local times in zones with
 * half-hour offsets and daylight saving (gaps and repeated hours), odd employee codes and statuses,
 * batches in one message, ATTLOG lines. The device stays connected throughout, and a good punch
 * after all of it is stored. mqtt-embedded-input.fuzz.test.ts covers raw bytes and PUBACK accounting.
 * Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import fc from 'fast-check'
import { connectAsync, type MqttClient } from 'mqtt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../../agent/config/schema.js'
import { MqttEmbeddedInput } from '../../../../agent/inputs/mqtt-embedded-input.js'
import { formatInZone, nowMicros } from '../../../../shared/time.js'
import {
  punchPayload,
  silentLog,
  startTestAgent,
  type TestAgent,
} from '../../../agent/inputs/mqtt-test-agent.js'
import {
  deadLetterProblems,
  type RecordContext,
  spooledPunchProblems,
} from '../../../agent/punch/spooled-record-checks.js'
import { printTable } from '../../../support/e2e-kit.js'

const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
const MINUTE = 60_000_000

/** Devices of every kind the payloads can reach: formats, a status map, a fixed type, odd zones. */
const DEVICES: DeviceConfig[] = [
  { id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } },
  { id: 'plant', mqtt: { topic: 'plant/+', format: 'zk-attlog' } },
  {
    id: 'mapped',
    mqtt: { topic: 'mapped', format: 'json' },
    statusMap: { '0': 'IN', '1': 'OUT', '17': 'OUT' },
  },
  { id: 'entry', mqtt: { topic: 'entry', format: 'json' }, punchType: 'IN' },
  { id: 'st-johns', mqtt: { topic: 'st-johns', format: 'json' }, timezone: 'America/St_Johns' },
  { id: 'chatham', mqtt: { topic: 'chatham', format: 'zk-attlog' }, timezone: 'Pacific/Chatham' },
] as DeviceConfig[]
const TOPICS = ['punches/gate-1', 'plant/reader-1', 'mapped', 'entry', 'st-johns', 'chatham']
const ZONES = ['Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham', 'Pacific/Kiritimati', 'UTC']

/** Days around now, and around the daylight-saving changes of St John's and Chatham this year. */
const instant = fc.oneof(
  fc.integer({ min: -60 * 24 * 60, max: 10 }).map((m) => nowMicros() + m * MINUTE),
  fc
    .tuple(
      fc.constantFrom(
        '2026-03-08T05:30:00Z',
        '2026-11-01T04:30:00Z',
        '2026-04-05T14:00:00Z',
        '2026-09-27T14:00:00Z',
      ),
      fc.integer({ min: -120, max: 120 }),
    )
    .map(([at, m]) => Date.parse(at) * 1000 + m * MINUTE),
)

/** A time as firmware spells it: RFC 3339 in any zone and precision, a local time, or a near miss. */
const timeText: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(instant, fc.constantFrom(...ZONES)).map(([at, zone]) => formatInZone(at, zone)),
  fc
    .tuple(instant, fc.constantFrom(...ZONES))
    .map(([at, zone]) => formatInZone(at, zone).slice(0, 19).replace('T', ' ')),
  fc.tuple(instant, fc.constantFrom(...ZONES)).map(([at, zone]) => formatInZone(at, zone).slice(0, 19)),
  fc
    .tuple(
      instant,
      fc.constantFrom('.1', '.123456789', '.000', ',5'),
      fc.constantFrom('Z', 'z', '+14:00', '-12:00', '+05:45', '+23:59', '-00:00', '+0530', '+05'),
    )
    .map(([at, fraction, offset]) => `${new Date(at / 1000).toISOString().slice(0, 19)}${fraction}${offset}`),
  fc
    .tuple(instant, fc.constantFrom('t', ' ', '_'))
    .map(([at, sep]) => new Date(at / 1000).toISOString().replace('T', sep)),
  fc.constantFrom(
    // St John's springs forward at 02:00 local on 8 March 2026: 02:30 does not exist; it falls
    // back at 02:00 on 1 November: 01:30 happens twice. Chatham's change is at 02:45 and 03:45.
    '2026-03-08 02:30:00',
    '2026-11-01 01:30:00',
    '2026-09-27 03:00:00',
    '2026-04-05 03:15:00',
    '2026-11-21 23:59:60',
    '2026-11-21 24:00:00',
    '2026-11-21T24:00:00Z',
    '2026-11-21T23:59:60Z',
    '2026-02-29 09:00:00',
    '2026-11-31 09:00:00',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '+002026-11-21T09:00:00Z',
    '2026-11-21',
    '09:00:00',
    '1763715600',
    '',
  ),
  fc.oneof(fc.integer(), fc.double(), fc.constant(null), fc.string({ maxLength: 30 })),
)

const employeeCode: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('E001', '7', 'e.003', 'A-9_z') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'A'.repeat(64),
      'A'.repeat(65),
      '.E001',
      '-1',
      'E001 ',
      ' E001',
      'E 001',
      '١٢٣',
      'ＥＯＯ１',
      'E001\u0000',
      'E001\n',
      'ǅ',
      '',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.integer({ min: -5, max: 1_000_000 }),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.string({ maxLength: 70 }),
    ),
  },
)

const punchType: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('IN', 'OUT') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('in', 'Out', 'BREAK', '', ' IN', 'IN ', 0, 1, null, ['IN'], { v: 'IN' }),
  },
)

const status: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -2, max: 20 }),
  fc.constantFrom('0', '1', '01', '17', '1.0', 1.0, 1.5, 1e3, -0, '0x1', ' 1', null, true),
)

const punch = fc.record(
  { employeeCode, punchType, status, punchedAt: timeText, extra: fc.jsonValue({ maxDepth: 1 }) },
  { requiredKeys: ['employeeCode'] },
)

const attlogLine = fc
  .tuple(
    fc.oneof(fc.stringMatching(/^[0-9]{1,9}$/), employeeCode.map(String)),
    timeText.map(String),
    fc.oneof(fc.integer({ min: 0, max: 20 }).map(String), fc.constantFrom('', 'x', '-1', '01')),
    fc.array(fc.stringMatching(/^[0-9]{0,4}$/), { maxLength: 3 }),
  )
  .map(([pin, time, s, rest]) => [pin, time, s, ...rest].join('\t'))

const payload: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 5, arbitrary: punch.map((p) => Buffer.from(JSON.stringify(p))) },
  {
    weight: 2,
    arbitrary: fc.array(punch, { minLength: 1, maxLength: 6 }).map((p) => Buffer.from(JSON.stringify(p))),
  },
  {
    weight: 3,
    arbitrary: fc.array(attlogLine, { minLength: 1, maxLength: 4 }).map((l) => Buffer.from(l.join('\r\n'))),
  },
)

describe('MqttEmbeddedInput: what near-valid payloads leave stored', () => {
  let agent: TestAgent
  let input: MqttEmbeddedInput
  let url: string
  let client: MqttClient
  let closes = 0
  const context: RecordContext = {
    deviceIds: DEVICES.map((d) => d.id),
    now: nowMicros,
    clockFloor: Date.parse('2020-01-01T00:00:00Z') * 1000,
  }

  beforeAll(async () => {
    agent = await startTestAgent(DEVICES)
    input = new MqttEmbeddedInput({
      config: { host: '127.0.0.1', port: 0, users: [] },
      devices: DEVICES,
      sink: agent.intake,
      events: agent.events,
      log: silentLog,
    })
    await input.start()
    url = `mqtt://127.0.0.1:${input.address()?.port}`
    client = await connectAsync(url, { reconnectPeriod: 0 })
    client.on('close', () => closes++)
  })

  afterAll(async () => {
    await client?.endAsync()
    await input?.stop()
    await agent?.close()
  })

  // 400 runs through a real broker: about half a minute on a busy 2-core machine, so the hang guard is longer.
  it('spools only punches the cloud takes on their shape, and well-formed dead letters', async () => {
    let spooledSeen = 0
    let deadSeen = 0
    let punches = 0
    let parked = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TOPICS), payload, async (topic, body) => {
        const before = agent.spool.stats().items + agent.deadLetters.count()
        // The PUBACK comes once the intake has stored what it made of the payload.
        await client.publishAsync(topic, body, { qos: 1 })
        expect(agent.spool.stats().items + agent.deadLetters.count()).toBeGreaterThan(before)
        const spooled = (await agent.punches()).slice(spooledSeen)
        const dead = (await agent.deadLettered()).slice(deadSeen)
        spooledSeen += spooled.length
        deadSeen += dead.length
        punches += spooled.length
        parked += dead.length
        expect(spooled.flatMap((p) => spooledPunchProblems(p, context))).toEqual([])
        expect(dead.flatMap((d) => deadLetterProblems(d, context))).toEqual([])
      }),
      { numRuns: 400, seed: SEED },
    )
    printTable('MQTT payload fuzz: what 400 payloads left stored', { punches, 'dead letters': parked })
    // Both outcomes were reached, so both checks ran.
    expect(punches).toBeGreaterThan(0)
    expect(parked).toBeGreaterThan(0)
    expect(closes, 'the device stayed connected').toBe(0)
    expect(client.connected).toBe(true)

    // And a good punch after all of it is stored.
    const items = agent.spool.stats().items
    await client.publishAsync('punches/gate-1', punchPayload('E42'), { qos: 1 })
    expect(agent.spool.stats().items).toBe(items + 1)
    expect((await agent.punches()).at(-1)).toMatchObject({ deviceId: 'gate-1', employeeCode: 'E42' })
  }, 120_000)
})
