/**
 * Fuzzing: serial frames, through the real serial input (SerialPortMock → SerialInput's
 * framer → a real PunchIntake → Spool and DeadLetters in a temp dir), for every framing and record
 * format a device can be set to: line-framed ZKTeco ATTLOG, CSV and JSON, and STX/ETX-framed
 * ATTLOG. A device sends good records, near misses (one character changed, a field dropped, a
 * nonsense date), bytes of any kind and oversize lines, cut into chunks anywhere. Whatever it sends:
 *
 * - every good record is spooled, in order, and the device's next record after the run too
 *   (a bad frame never stops the device);
 * - every spooled punch and dead letter is well formed (spooled-record-checks.ts): nothing the
 *   cloud would refuse on its shape is stored as a punch;
 * - every malformed frame is counted, logged and kept in dead letters (as many of each);
 * - nothing is dropped: each frame the input handed over left at least one punch or dead letter;
 * - the input never fails a frame and never reopens its port.
 *
 * serial-input.intake.test.ts covers ATTLOG lines between random bytes; this adds the other
 * framings and formats, near-valid records and the checks of what is stored.
 * Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { SerialPortMock } from 'serialport'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../../agent/config/schema.js'
import { SerialInput, type SerialSettings } from '../../../../agent/inputs/serial-input.js'
import { PunchIntake } from '../../../../agent/intake/punch-intake.js'
import type { SpooledPunch } from '../../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../../agent/spool/dead-letters.js'
import { Spool } from '../../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../../shared/time.js'
import {
  chunked,
  type LogLine,
  memoryLog,
  recordEvents,
  recordingSerialPortMock,
  serialSettings,
  until,
} from '../../../agent/inputs/serial-test-kit.js'
import {
  deadLetterProblems,
  type RecordContext,
  spooledPunchProblems,
} from '../../../agent/punch/spooled-record-checks.js'
import { allDeadLetters } from '../../../agent/spool/all-dead-letters.js'
import { printTable } from '../../../support/e2e-kit.js'

const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
const NOW = parseTimestamp('2026-11-21T12:00:00+05:30') as number
const CLOCK_FLOOR = '2020-01-01T00:00:00Z'
/** Small, so that oversize frames are cheap to make. */
const MAX_FRAME_BYTES = 512
const STX = 0x02
const ETX = 0x03

/** A good record's time: minutes before NOW in the site's zone (Asia/Kolkata), as a device writes it. */
const localTime = (minutesAgo: number) =>
  new Date(NOW / 1000 + 330 * 60_000 - minutesAgo * 60_000).toISOString().slice(0, 19).replace('T', ' ')

interface Kind {
  id: string
  serial: SerialSettings
  /** A good record of employee `pin` (no framing). */
  record(pin: string, minutesAgo: number): string
  /** Frames a record. */
  frame(record: Buffer): Buffer
}

const line = (record: Buffer) => Buffer.concat([record, Buffer.from('\r\n')])
const KINDS: Kind[] = [
  {
    id: 'attlog-line',
    serial: serialSettings('/dev/ttyFUZZ0'),
    record: (pin, m) => `${pin}\t${localTime(m)}\t${m % 2}\t1\t0`,
    frame: line,
  },
  {
    id: 'csv-line',
    serial: serialSettings('/dev/ttyFUZZ1', {
      format: 'csv',
      csv: { delimiter: ',', columns: { employeeCode: 0, punchedAt: 1, status: 2 } },
    }),
    record: (pin, m) => `${pin},${localTime(m)},${m % 2}`,
    frame: line,
  },
  {
    id: 'json-line',
    serial: serialSettings('/dev/ttyFUZZ2', { format: 'json' }),
    record: (pin, m) =>
      JSON.stringify({ employeeCode: pin, punchType: m % 2 === 0 ? 'IN' : 'OUT', punchedAt: localTime(m) }),
    frame: line,
  },
  {
    id: 'attlog-stx',
    serial: serialSettings('/dev/ttyFUZZ3', { framing: { type: 'stx-etx' } }),
    record: (pin, m) => `${pin}\t${localTime(m)}\t${m % 2}\t1\t0`,
    frame: (record) => Buffer.concat([Buffer.from([STX]), record, Buffer.from([ETX])]),
  },
]

/** One thing a device sends. */
type Item =
  | { type: 'good'; minutesAgo: number }
  | { type: 'near'; minutesAgo: number; edit: [kind: string, at: number, insert: string] }
  | { type: 'bytes'; bytes: Uint8Array }
  | { type: 'oversize'; length: number }

/** One change to a good record: the near misses a noisy line or a firmware quirk produces. */
function edit(text: string, [kind, at, insert]: [string, number, string]): string {
  const i = text.length === 0 ? 0 : at % text.length
  switch (kind) {
    case 'delete':
      return text.slice(0, i) + text.slice(i + 1)
    case 'insert':
      return text.slice(0, i) + insert + text.slice(i)
    case 'replace':
      return text.slice(0, i) + insert + text.slice(i + 1)
    case 'truncate':
      return text.slice(0, i)
    case 'date':
      return text.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, insert)
    default:
      return text + text.slice(0, i)
  }
}

const itemArb: fc.Arbitrary<Item> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('good' as const),
      minutesAgo: fc.integer({ min: 0, max: 60 * 24 * 30 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('near' as const),
      minutesAgo: fc.integer({ min: -30, max: 60 * 24 * 365 * 8 }),
      edit: fc.tuple(
        fc.constantFrom('delete', 'insert', 'replace', 'truncate', 'date', 'repeat'),
        fc.nat(),
        fc.oneof(
          // Never a digit: a near miss must not become another good record's PIN.
          fc.constantFrom('\t', ',', ' ', '"', ':', '-', '{', '}', 'x', 'é', '\u0000', '\r', '\\', 'T'),
          fc.constantFrom(
            '2026-02-30 25:61:00',
            '2026-11-21 23:59:60',
            '0000-00-00 00:00:00',
            '9999-12-31 23:59:59',
            '1970-01-01 00:00:00',
            '2026-11-21T09:00:00+05:30',
            '2026-11-21 09:00',
            '',
          ),
        ),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('bytes' as const),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 80 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('oversize' as const),
      length: fc.integer({ min: MAX_FRAME_BYTES + 1, max: 3 * MAX_FRAME_BYTES }),
    }),
  },
)

let dir: string
let spool: Spool
let deadLetters: DeadLetters
let lines: LogLine[]
/** Every frameMalformed event, in order. */
let malformedEvents: unknown[] = []
const inputs = new Map<string, { input: SerialInput; mock: ReturnType<typeof recordingSerialPortMock> }>()
const context: RecordContext = {
  deviceIds: KINDS.map((k) => k.id),
  now: () => NOW,
  clockFloor: parseTimestamp(CLOCK_FLOOR) as number,
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-serial-fuzz-'))
  const memory = memoryLog()
  lines = memory.lines
  const { events, states, malformed } = recordEvents(memory.log)
  malformedEvents = malformed
  spool = new Spool({
    dir: join(dir, 'spool'),
    maxBytes: 1 << 30,
    chunkPunches: 500,
    log: memory.log,
    events,
  })
  deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log: memory.log })
  await spool.start()
  await deadLetters.open()
  const devices: DeviceConfig[] = KINDS.map((k) => ({ id: k.id, serial: k.serial }) as DeviceConfig)
  const intake = new PunchIntake({
    config: { site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: CLOCK_FLOOR }, devices },
    spool,
    deadLetters,
    events,
    log: memory.log,
    now: () => NOW,
  })
  for (const kind of KINDS) {
    SerialPortMock.binding.createPort(kind.serial.path, { echo: false, record: true })
    const mock = recordingSerialPortMock()
    const input = new SerialInput({
      deviceId: kind.id,
      serial: kind.serial,
      sink: intake,
      events,
      log: memory.log,
      SerialPort: mock.SerialPort,
      maxFrameBytes: MAX_FRAME_BYTES,
    })
    await input.start()
    inputs.set(kind.id, { input, mock })
  }
  await until(
    () => states.filter((s) => s.state === 'connected').length === KINDS.length,
    'every port to open',
  )
})

afterAll(async () => {
  for (const { input } of inputs.values()) await input.stop()
  await spool?.stop()
  await deadLetters?.drain()
  SerialPortMock.binding.reset()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function spooledPunches(): Promise<SpooledPunch[]> {
  const all: SpooledPunch[] = []
  for (const ref of spool.pending()) all.push(...(await spool.read(ref)))
  return all
}

let nextPin = 100_000

describe('serial frames of every framing and format, generated', () => {
  for (const kind of KINDS) {
    it(`${kind.id}: good records spooled in order, every stored record well formed, every bad frame counted`, async () => {
      const { input, mock } = inputs.get(kind.id) as NonNullable<ReturnType<typeof inputs.get>>
      const tally = { frames: 0, good: 0, spooled: 0, deadLettered: 0 }
      await fc.assert(
        fc.asyncProperty(
          fc.array(itemArb, { minLength: 1, maxLength: 10 }),
          fc.array(fc.nat(), { maxLength: 8 }),
          async (items, cuts) => {
            const good: string[] = []
            const parts = items.map((item) => {
              switch (item.type) {
                case 'good': {
                  const pin = String(++nextPin)
                  good.push(pin)
                  return kind.frame(Buffer.from(kind.record(pin, item.minutesAgo)))
                }
                case 'near':
                  // PINs of near misses start with 5 and keep six digits or lose one: never a good PIN.
                  return kind.frame(
                    Buffer.from(
                      edit(kind.record(String(500_000 + (nextPin % 1000)), item.minutesAgo), item.edit),
                    ),
                  )
                case 'bytes':
                  return kind.frame(Buffer.from(item.bytes))
                default:
                  return kind.frame(Buffer.from('9'.repeat(item.length)))
              }
            })
            // The device's next record, after whatever came before: it must be read.
            const sentinel = String(++nextPin)
            good.push(sentinel)
            const stream = Buffer.concat([
              ...parts,
              Buffer.from('\r\n'),
              kind.frame(Buffer.from(kind.record(sentinel, 1))),
            ])

            const spooledBefore = spool.stats().items
            const deadBefore = deadLetters.count()
            const statsBefore = input.stats()
            const malformedBefore = malformedEvents.length
            const logsBefore = lines.filter((l) => l.msg === 'malformed frame').length

            for (const chunk of chunked(stream, cuts)) mock.send(chunk)
            let spooled: SpooledPunch[] = []
            await until(() => spool.stats().items > spooledBefore, 'a punch of this run')
            for (;;) {
              spooled = (await spooledPunches()).slice(spooledBefore)
              if (spooled.some((p) => p.deviceId === kind.id && p.employeeCode === sentinel)) break
              await until(
                () => spool.stats().items > spooledBefore + spooled.length,
                `the record after the run (${sentinel})`,
              )
            }

            const mine = spooled.filter((p) => p.deviceId === kind.id)
            expect(mine.map((p) => p.employeeCode).filter((code) => good.includes(code))).toEqual(good)
            expect(mine.at(-1)?.employeeCode, 'the last record read is the one after the run').toBe(sentinel)
            expect(spooled.flatMap((p) => spooledPunchProblems(p, context))).toEqual([])

            const dead = (await allDeadLetters(deadLetters)).slice(deadBefore)
            expect(dead.every((d) => d.deviceId === kind.id)).toBe(true)
            expect(dead.flatMap((d) => deadLetterProblems(d, context))).toEqual([])

            // Counted, logged and kept alike; the input's own count is of what it could not frame.
            const stats = input.stats()
            const malformedDead = dead.filter((d) => d.reason === 'malformed_frame').length
            expect(malformedEvents.length - malformedBefore).toBe(malformedDead)
            expect(lines.filter((l) => l.msg === 'malformed frame').length - logsBefore).toBe(malformedDead)
            const oversize = items.filter((i) => i.type === 'oversize').length
            expect(stats.malformedFrames - statsBefore.malformedFrames).toBeGreaterThanOrEqual(oversize)
            // Nothing dropped: each frame handed over left a punch or a dead letter.
            expect(spooled.length + dead.length).toBeGreaterThanOrEqual(stats.frames - statsBefore.frames)
            expect(stats.failedFrames).toBe(0)
            expect(stats.opens).toBe(1)
            tally.frames += items.length + 1
            tally.good += good.length
            tally.spooled += spooled.length
            tally.deadLettered += dead.length
          },
        ),
        { numRuns: 60, seed: SEED },
      )
      printTable(`serial fuzz, ${kind.id}`, tally)
    }, 120_000)
  }
})
