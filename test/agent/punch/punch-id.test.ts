import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { EventBus } from '../../../agent/events.js'
import { PunchIntake } from '../../../agent/intake/punch-intake.js'
import { type NormalizeContext, normalizePunch } from '../../../agent/punch/normalize.js'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../shared/time.js'

const log = pino({ level: 'silent' })
const NINE_IN_PUNE = parseTimestamp('2026-11-21T03:30:00Z') as number

function context(overrides: Partial<NormalizeContext> = {}): NormalizeContext {
  return {
    deviceId: 'gate-1',
    timeZone: 'Asia/Kolkata',
    clockFloor: parseTimestamp('2020-01-01T00:00:00Z') as number,
    now: parseTimestamp('2026-11-21T04:30:00Z') as number,
    ...overrides,
  }
}

function idOf(punchedAt: string, overrides: Partial<NormalizeContext> = {}): string {
  const result = normalizePunch({ employeeCode: 'E001', punchType: 'IN', punchedAt }, context(overrides))
  if (!result.ok) throw new Error(`${punchedAt}: ${result.reason}`)
  return result.punch.id
}

describe('punchId', () => {
  it('is hjp_ and 32 hex digits', () => {
    expect(punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN')).toMatch(/^hjp_[0-9a-f]{32}$/)
  })

  it('is the same for the same device, employee, instant and type', () => {
    expect(punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN')).toBe(punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN'))
  })

  it('depends on the instant, not on how the time was written', () => {
    const ids = [
      idOf('2026-11-21 09:00:00'),
      idOf('2026-11-21T09:00:00+05:30'),
      idOf('2026-11-21T03:30:00Z'),
      idOf('2026-11-21T03:30:00.000000Z'),
      idOf('2026-11-20T22:30:00-05:00'),
      // The same instant as local time on a device set to another zone.
      idOf('2026-11-21 07:30:00', { timeZone: 'Asia/Dubai' }),
    ]
    expect(new Set(ids)).toEqual(new Set([punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN')]))
  })

  it('differs when any one component differs', () => {
    const base = punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN')
    expect(punchId('gate-2', 'E001', NINE_IN_PUNE, 'IN')).not.toBe(base)
    expect(punchId('gate-1', 'E002', NINE_IN_PUNE, 'IN')).not.toBe(base)
    expect(punchId('gate-1', 'E001', NINE_IN_PUNE + 1, 'IN')).not.toBe(base)
    expect(punchId('gate-1', 'E001', NINE_IN_PUNE + 1_000_000, 'IN')).not.toBe(base)
    expect(punchId('gate-1', 'E001', NINE_IN_PUNE, 'OUT')).not.toBe(base)
  })

  it('keeps its components apart: moving text from one to the next makes another id', () => {
    expect(punchId('gate-1E', '001', NINE_IN_PUNE, 'IN')).not.toBe(
      punchId('gate-1', 'E001', NINE_IN_PUNE, 'IN'),
    )
    expect(punchId('gate-1', 'E0011', 764_000_000, 'IN')).not.toBe(
      punchId('gate-1', 'E001', 1_764_000_000, 'IN'),
    )
  })

  it('never gives two different punches one id', () => {
    const component = fc.tuple(
      fc.constantFrom('gate-1', 'gate-2', 'gate-10', 'main-door'),
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/),
      fc.integer({ min: 1_577_836_800_000_000, max: 1_800_000_000_000_000 }),
      fc.constantFrom('IN', 'OUT'),
    )
    fc.assert(
      fc.property(component, component, (a, b) => {
        fc.pre(a.join('|') !== b.join('|'))
        expect(punchId(...a)).not.toBe(punchId(...b))
      }),
    )
  })
})

describe('a device that sends its log again', () => {
  let dir: string | undefined
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('makes no new ids: the same records give the same punch ids, whenever they arrive', async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-punch-id-'))
    const events = new EventBus(log)
    const spool = new Spool({ dir: join(dir, 'spool'), maxBytes: 1 << 30, chunkPunches: 500, log, events })
    const deadLetters = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
    await spool.start()
    await deadLetters.open()
    const device: DeviceConfig = {
      id: 'main-door',
      serial: {
        path: '/dev/ttyUSB0',
        baudRate: 9600,
        dataBits: 8,
        parity: 'none',
        stopBits: 1,
        framing: { type: 'line', delimiter: '\n' },
        format: 'zk-attlog',
      },
    }
    let now = parseTimestamp('2026-11-21T04:30:00Z') as number
    const intake = new PunchIntake({
      config: {
        site: { id: 'pune', timezone: 'Asia/Kolkata', clockFloor: '2020-01-01T00:00:00Z' },
        devices: [device],
      },
      spool,
      deadLetters,
      events,
      log,
      now: () => now,
    })
    const log1 = ['1001\t2026-11-21 08:58:12\t0\t1\t0', '1002\t2026-11-21 08:59:40\t0\t1\t0']
    const log2 = [...log1, '1001\t2026-11-21 09:55:03\t1\t1\t0']
    for (const line of log1) await intake.accept('main-door', 'serial', Buffer.from(line))
    // An hour later the device dumps its whole log, old records included, as one frame.
    now += 3600_000_000
    await intake.accept('main-door', 'serial', Buffer.from(log2.join('\r\n')))

    const stored: SpooledPunch[] = []
    for (const ref of spool.pending()) stored.push(...(await spool.read(ref)))
    const first = stored.slice(0, 2)
    const again = stored.slice(2)
    expect(again).toHaveLength(3)
    expect(again.slice(0, 2).map((p) => p.id)).toEqual(first.map((p) => p.id))
    // The receipt time differs; it is not part of the identity.
    expect(again[0]?.receivedAt).not.toBe(first[0]?.receivedAt)
    // Only the genuinely new record has a new id.
    expect(new Set(stored.map((p) => p.id)).size).toBe(3)
    expect(again[2]).toMatchObject({
      employeeCode: '1001',
      punchType: 'OUT',
      punchedAt: '2026-11-21T09:55:03+05:30',
    })
    await spool.stop()
    await deadLetters.drain()
  })
})
