import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { computeDays } from '../../../../../cloud/features/attendance/engine/compute-days.js'
import { defaultPolicy } from '../../../../../cloud/features/attendance/engine/policy-defaults.js'
import type {
  DaysInput,
  EnginePunch,
  Policy,
  Shift,
} from '../../../../../cloud/features/attendance/engine/types.js'
import { parseLocalTimestamp } from '../../../../../shared/time.js'
import { MINUTE } from './engine-fixtures.js'

const pad = (n: number) => String(n).padStart(2, '0')

const shiftArb: fc.Arbitrary<Shift | null> = fc.option(
  fc
    .record({
      night: fc.boolean(),
      startHour: fc.integer({ min: 0, max: 5 }),
      startMinute: fc.constantFrom(0, 30),
      hours: fc.integer({ min: 4, max: 12 }),
      unpaidBreakMinutes: fc.constantFrom(0, 30, 60),
      earlyWindowMinutes: fc.integer({ min: 0, max: 240 }),
      lateWindowMinutes: fc.integer({ min: 0, max: 240 }),
      lateGraceMinutes: fc.integer({ min: 0, max: 30 }),
      earlyExitGraceMinutes: fc.integer({ min: 0, max: 30 }),
    })
    .map(({ night, startHour, startMinute, hours, ...rest }) => {
      // Day shifts start 06:00–11:30, night shifts 18:00–23:30.
      const start = (night ? 18 : 6) + startHour
      return {
        code: night ? 'NIGHT' : 'DAY',
        start: `${pad(start)}:${pad(startMinute)}`,
        end: `${pad((start + hours) % 24)}:${pad(startMinute)}`,
        ...rest,
      }
    }),
  { freq: 5 },
)

const policyArb: fc.Arbitrary<Policy> = fc
  .record({
    regime: fc.constantFrom('FACTORIES_ACT_1948' as const, 'OSH_CODE_2020' as const),
    pairing: fc.constantFrom('TOLERANT' as const, 'FIRST_LAST' as const, 'ALTERNATE' as const),
    duplicateWindowSeconds: fc.constantFrom(0, 60, 120),
    countEarlyArrival: fc.boolean(),
    overtimeBasis: fc.constantFrom('DAILY_LIMIT' as const, 'SHIFT' as const),
    overtimeToleranceMinutes: fc.constantFrom(0, 10),
    overtimeRounding: fc.constantFrom('NONE' as const, 'HALF_HOUR' as const),
    maxShiftMinutes: fc.constantFrom(600, 960),
  })
  .map(({ regime, ...rest }) => ({ ...defaultPolicy(regime), ...rest }))

// London's clocks go forward on 29 March 2026: the three days straddle it.
const zoneArb = fc.constantFrom(
  { timeZone: 'Asia/Kolkata', dates: ['2026-03-09', '2026-03-10', '2026-03-11', '2026-03-12', '2026-03-13'] },
  {
    timeZone: 'Europe/London',
    dates: ['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30', '2026-03-31'],
  },
)

/** Punches over the three middle dates: minute and second offsets from the first one's midnight. */
const punchSpecArb = fc.array(
  fc.record({
    minute: fc.integer({ min: 0, max: 3 * 1440 - 1 }),
    second: fc.constantFrom(0, 0, 0, 30),
    punchType: fc.constantFrom('IN' as const, 'OUT' as const),
    copies: fc.integer({ min: 1, max: 3 }),
  }),
  { maxLength: 16 },
)

const caseArb = fc
  .record({
    shift: shiftArb,
    policy: policyArb,
    zone: zoneArb,
    specs: punchSpecArb,
    offDay: fc.integer({ min: 0, max: 6 }),
  })
  .chain((c) => {
    const midnight = parseLocalTimestamp(`${c.zone.dates[1]} 00:00:00`, c.zone.timeZone)!
    const unique: EnginePunch[] = c.specs.map((s, i) => ({
      id: `p${pad(i)}`,
      punchType: s.punchType,
      punchedAt: midnight + s.minute * MINUTE + s.second * 1_000_000,
    }))
    const sent = c.specs.flatMap((s, i) => Array.from({ length: s.copies }, () => ({ ...unique[i]! })))
    return fc
      .shuffledSubarray(sent, { minLength: sent.length, maxLength: sent.length })
      .map((shuffled) => ({ ...c, unique, shuffled }))
  })

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

function input(c: Case, punches: EnginePunch[]): DaysInput {
  return {
    employeeCode: 'E1',
    timeZone: c.zone.timeZone,
    dates: [...c.zone.dates],
    // The shift on the middle date only differs: day and night shifts meet at its edges.
    shiftFor: (date) => (date === c.zone.dates[3] ? null : c.shift),
    isHoliday: (date) => date === c.zone.dates[2],
    policy: { ...c.policy, weeklyOffDays: [c.offDay] },
    punches,
  }
}

describe('computeDays, for any punches', () => {
  it('depends only on the set of punches: any order, any re-sends, the same days', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const sorted = [...c.unique].sort((a, b) => a.punchedAt - b.punchedAt || (a.id < b.id ? -1 : 1))
        expect(computeDays(input(c, c.shuffled))).toEqual(computeDays(input(c, sorted)))
      }),
      { numRuns: 300 },
    )
  })

  it('puts every punch inside a returned window into exactly one day, and no punch into two', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const result = computeDays(input(c, c.shuffled))
        const seen = result.flatMap((d) => d.punches.map((p) => p.id))
        expect(new Set(seen).size).toBe(seen.length)
        for (const p of c.unique) {
          const inWindow = result.some((d) => p.punchedAt >= d.captureStart && p.punchedAt < d.captureEnd)
          if (inWindow) expect(seen, `punch ${p.id}`).toContain(p.id)
        }
        // The windows of consecutive dates never overlap.
        for (let i = 1; i < result.length; i++) {
          expect(result[i]!.captureStart).toBeGreaterThanOrEqual(result[i - 1]!.captureEnd)
        }
        for (const d of result) {
          expect(d.workedMinutes).toBeGreaterThanOrEqual(0)
          expect(Number.isInteger(d.workedMinutes)).toBe(true)
          expect(d.flags).toEqual([...new Set(d.flags)].sort())
          if (d.status === 'INCOMPLETE') expect(d.overtimeMinutes).toBe(0)
        }
      }),
      { numRuns: 300 },
    )
  })
})
