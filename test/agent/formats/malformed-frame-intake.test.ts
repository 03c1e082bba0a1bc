/**
 * Issue 4: "a malformed frame is counted and logged with the device id and its raw bytes (hex,
 * truncated); it never stops the device", and DESIGN.md §5: nothing is dropped. Frames generated
 * by fast-check go through a real PunchIntake, Spool and DeadLetters in a temp dir: each unreadable
 * one is in dead letters with its text and in the log with its hex, and the device's next good
 * frame is still spooled.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { type AgentEvents, EventBus } from '../../../agent/events.js'
import { csvPunchParser } from '../../../agent/formats/csv-punch.js'
import { parseJsonPunches } from '../../../agent/formats/json-punch.js'
import { parseZkAttlog } from '../../../agent/formats/zk-attlog.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../shared/time.js'
import { memoryLog } from '../inputs/serial-test-kit.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'

const NOW = parseTimestamp('2026-11-21T12:00:00+05:30') as number
const serial = (format: 'zk-attlog' | 'csv' | 'json'): DeviceConfig['serial'] => ({
  path: '/dev/null',
  baudRate: 9600,
  dataBits: 8,
  parity: 'none',
  stopBits: 1,
  framing: { type: 'line', delimiter: '\n' },
  format,
  ...(format === 'csv'
    ? { csv: { delimiter: ',', columns: { employeeCode: 0, punchedAt: 1, punchType: 2 } } }
    : {}),
})
const DEVICES = [
  {
    id: 'gate-1',
    serial: serial('zk-attlog'),
    format: parseZkAttlog,
    good: '7\t2026-11-21 09:00:00\t0\t1\t0',
  },
  {
    id: 'csv-reader',
    serial: serial('csv'),
    format: csvPunchParser({ employeeCode: 0, punchedAt: 1, punchType: 2 }),
    good: '7,2026-11-21 09:00:00,IN',
  },
  {
    id: 'json-reader',
    serial: serial('json'),
    format: parseJsonPunches,
    good: '{"employeeCode":"7","punchType":"IN","punchedAt":"2026-11-21 09:00:00"}',
  },
] as const

let dir: string
let spool: Spool
let deadLetters: DeadLetters
let intake: PunchIntake
let lines: ReturnType<typeof memoryLog>['lines']
const malformedEvents: AgentEvents['frameMalformed'][] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-intake-'))
  const memory = memoryLog()
  lines = memory.lines
  const events = new EventBus(memory.log)
  events.on('frameMalformed', (e) => malformedEvents.push(e))
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
  intake = new PunchIntake({
    config: {
      site: { id: 'pune-plant-1', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
      devices: DEVICES.map(({ id, serial }) => ({ id, serial })),
    },
    spool,
    deadLetters,
    events,
    log: memory.log,
    now: () => NOW,
  })
})

afterAll(async () => {
  await spool?.stop()
  await deadLetters?.drain()
  if (dir) await rm(dir, { recursive: true, force: true })
})

function isJsonArray(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text))
  } catch {
    return false
  }
}

async function spooledPunches(): Promise<SpooledPunch[]> {
  const all: SpooledPunch[] = []
  for (const ref of spool.pending()) all.push(...(await spool.read(ref)))
  return all
}

describe('a malformed device frame through the intake', () => {
  it('is dead-lettered with its text, logged with the device id and hex, and the device keeps working', async () => {
    const frame = Buffer.from('1\t2026-11-21 09:00\x00\xff\t0', 'latin1')
    const before = (await spooledPunches()).length
    await intake.accept('gate-1', 'serial', frame)
    await intake.accept('gate-1', 'serial', Buffer.from(DEVICES[0].good))

    const dead = (await allDeadLetters(deadLetters)).at(-1)
    expect(dead).toMatchObject({
      deviceId: 'gate-1',
      reason: 'malformed_frame',
      raw: frame.toString('utf8'),
      detail: expect.stringMatching(/is not a YYYY-MM-DD HH:mm:ss time/),
    })
    expect(lines.filter((l) => l.msg === 'malformed frame').at(-1)).toMatchObject({
      deviceId: 'gate-1',
      bytes: frame.length,
      frame: frame.toString('hex'),
    })
    expect(malformedEvents.at(-1)).toMatchObject({ deviceId: 'gate-1' })
    const punches = await spooledPunches()
    expect(punches).toHaveLength(before + 1)
    expect(punches.at(-1)).toMatchObject({ deviceId: 'gate-1', employeeCode: '7', punchType: 'IN' })
  })

  it('truncates the hex in the log and the text in the dead letter', async () => {
    const frame = Buffer.from(`nonsense ${'#'.repeat(5000)}`)
    await intake.accept('gate-1', 'serial', frame)
    expect((await allDeadLetters(deadLetters)).at(-1)?.raw).toBe(frame.toString().slice(0, 1024))
    expect(lines.filter((l) => l.msg === 'malformed frame').at(-1)).toMatchObject({
      bytes: frame.length,
      frame: frame.subarray(0, 64).toString('hex'),
    })
  })

  it('holds for generated malformed frames of every format', async () => {
    // One line of arbitrary bytes (a serial frame is one line) that its format cannot read at all.
    const bytes = fc
      .uint8Array({ minLength: 1, maxLength: 200 })
      .map((b) => Buffer.from(b.filter((x) => x !== 0x0a)))
    const unreadable = fc
      .tuple(fc.constantFrom(0, 1, 2), bytes)
      .filter(([i, frame]) => DEVICES[i].format(frame.toString('utf8')).punches.length === 0)
    await fc.assert(
      fc.asyncProperty(unreadable, async ([i, frame]) => {
        const d = DEVICES[i]
        const text = frame.toString('utf8')
        const records = d.format(text).malformed.map((m) => m.record.slice(0, 1024))
        const expectedDead = records.length
        const deadBefore = deadLetters.count()
        const logsBefore = lines.filter((l) => l.msg === 'malformed frame').length
        const spooledBefore = spool.stats().items

        await intake.accept(d.id, 'serial', frame)
        await intake.accept(d.id, 'serial', Buffer.from(d.good))

        expect(deadLetters.count()).toBe(deadBefore + expectedDead)
        const dead = (await allDeadLetters(deadLetters)).slice(deadBefore)
        expect(dead.every((e) => e.deviceId === d.id && e.reason === 'malformed_frame')).toBe(true)
        // The text of each unreadable record: the whole frame, unless a CR split it into lines or
        // it is a JSON array (each element its own record).
        expect(dead.map((e) => e.raw)).toEqual(records)
        if (!text.includes('\r') && !(d.id === 'json-reader' && isJsonArray(text))) {
          expect(records).toEqual([text.slice(0, 1024)])
        }
        const logged = lines.filter((l) => l.msg === 'malformed frame').slice(logsBefore)
        expect(logged).toHaveLength(expectedDead)
        expect(
          logged.every((l) => l.deviceId === d.id && l.frame === frame.subarray(0, 64).toString('hex')),
        ).toBe(true)
        expect(spool.stats().items).toBe(spooledBefore + 1)
      }),
      { numRuns: 60 },
    )
  })
})
