import { describe, expect, it } from 'vitest'
import { defaultPolicy } from '../../../../../cloud/features/attendance/engine/policy-defaults.js'
import type { EnginePunch } from '../../../../../cloud/features/attendance/engine/types.js'
import { day, days, HOUR, MINUTE, policy, punch, shift } from './engine-fixtures.js'

describe('a 20:00–04:00 shift in Asia/Kolkata', () => {
  // Splitting it at midnight into 4 h + 4 h, or measuring it against the calendar day, shows
  // overtime that was never worked; Factories Act s.57(b) counts it all on the day it starts.
  const night = shift({ code: 'N', start: '20:00', end: '04:00' })
  for (const basis of ['DAILY_LIMIT', 'SHIFT'] as const) {
    it(`is one day of 480 minutes on its start date with no overtime (basis ${basis})`, () => {
      const [d10, d11] = days(
        ['2026-03-10', '2026-03-11'],
        [punch('IN', '2026-03-10 20:00'), punch('OUT', '2026-03-11 04:00')],
        { shiftFor: night, policy: policy({ overtimeBasis: basis }) },
      )
      expect(d10!.workDate).toBe('2026-03-10')
      expect(d10!.workedMinutes).toBe(480)
      expect(d10!.overtimeMinutes).toBe(0)
      expect(d10!.status).toBe('PRESENT')
      expect(d11!.workedMinutes).toBe(0)
      expect(d11!.punches).toEqual([])
    })
  }
})

describe('a missing punch', () => {
  it('a single IN is INCOMPLETE with MISSING_OUT, never ABSENT', () => {
    const d = day('2026-03-10', [punch('IN', '2026-03-10 08:00')])
    expect(d.status).toBe('INCOMPLETE')
    expect(d.flags).toContain('MISSING_OUT')
    expect(d.pairs).toEqual([{ in: d.firstIn, out: null, minutes: 0 }])
  })

  it('a lone OUT is INCOMPLETE too', () => {
    const d = day('2026-03-10', [punch('OUT', '2026-03-10 17:00')])
    expect(d.status).toBe('INCOMPLETE')
    expect(d.flags).toContain('ORPHAN_OUT')
  })
})

describe('a zone whose clocks change (Europe/London)', () => {
  const london = { timeZone: 'Europe/London', shiftFor: shift({ start: '22:00', end: '06:00' }) }
  const at = (id: string, punchType: 'IN' | 'OUT', utcMillis: number): EnginePunch => ({
    id,
    punchType,
    punchedAt: utcMillis * 1000,
  })

  it('the spring-forward night 22:00–06:00 is 7 real hours: 420 minutes, and no undertime against the shift', () => {
    // 28 March 2026 22:00 GMT = 22:00 UTC; 29 March 06:00 BST = 05:00 UTC.
    const start = Date.UTC(2026, 2, 28, 22)
    const end = Date.UTC(2026, 2, 29, 5)
    const d = day('2026-03-28', [at('i', 'IN', start), at('o', 'OUT', end)], {
      ...london,
      policy: policy({ overtimeBasis: 'SHIFT', weeklyOffDays: [] }),
    })
    expect(d.scheduledStart).toBe(start * 1000)
    expect(d.scheduledEnd).toBe(end * 1000)
    expect(d.workedMinutes).toBe(420)
    expect(d.earlyExitMinutes).toBe(0)
    expect(d.overtimeMinutes).toBe(0)
    expect(d.explanation.find((e) => e.field === 'workedMinutes')?.text).toBe(
      'Worked 22:00–06:00 next day: 420 minutes.',
    )
  })

  it('the fall-back night 22:00–06:00 is 9 real hours: 540 minutes', () => {
    // 24 October 2026 22:00 BST = 21:00 UTC; 25 October 06:00 GMT = 06:00 UTC.
    const start = Date.UTC(2026, 9, 24, 21)
    const end = Date.UTC(2026, 9, 25, 6)
    const d = day('2026-10-24', [at('i', 'IN', start), at('o', 'OUT', end)], {
      ...london,
      policy: policy({ overtimeBasis: 'SHIFT', weeklyOffDays: [] }),
    })
    expect(d.scheduledEnd! - d.scheduledStart!).toBe(9 * HOUR)
    expect(d.workedMinutes).toBe(540)
    expect(d.overtimeMinutes).toBe(0)
    expect(d.spreadOverMinutes).toBe(540)
  })

  it('an unscheduled date on the spring-forward day is 23 hours long', () => {
    const d = day('2026-03-29', [], { timeZone: 'Europe/London', shiftFor: null })
    expect(d.captureEnd - d.captureStart).toBe(23 * HOUR)
  })
})

describe('day types', () => {
  it('a holiday beats a weekly off, and a day off without work is OFF', () => {
    const sunday = '2026-03-15'
    const [holiday, off, working] = days([sunday, '2026-03-22', '2026-03-10'], [], { holidays: [sunday] })
    expect([holiday!.dayType, holiday!.status]).toEqual(['HOLIDAY', 'OFF'])
    expect([off!.dayType, off!.status]).toEqual(['WEEKLY_OFF', 'OFF'])
    expect([working!.dayType, working!.status]).toEqual(['WORKING', 'ABSENT'])
  })

  it('work on a holiday is all overtime, with no lateness against a schedule not in force', () => {
    const d = day('2026-03-10', [punch('IN', '2026-03-10 09:00'), punch('OUT', '2026-03-10 13:00')], {
      holidays: ['2026-03-10'],
    })
    expect(d.status).toBe('PRESENT')
    expect(d.overtimeMinutes).toBe(240)
    expect(d.lateMinutes).toBe(0)
    expect(d.earlyExitMinutes).toBe(0)
    expect(d.flags).toContain('WORKED_ON_OFF_DAY')
  })

  it('returns the requested dates in the order asked, and none of the neighbours', () => {
    const result = days(['2026-03-12', '2026-03-10'], [])
    expect(result.map((d) => d.workDate)).toEqual(['2026-03-12', '2026-03-10'])
  })
})

describe('defaults', () => {
  it('the regimes set their limits', () => {
    const fa = defaultPolicy()
    expect(fa.legalRegime).toBe('FACTORIES_ACT_1948')
    expect([
      fa.dailyLimitMinutes,
      fa.weeklyLimitMinutes,
      fa.spreadOverLimitMinutes,
      fa.restAfterMinutes,
      fa.restMinutes,
    ]).toEqual([540, 2880, 630, 300, 30])
    const osh = defaultPolicy('OSH_CODE_2020')
    expect([
      osh.dailyLimitMinutes,
      osh.weeklyLimitMinutes,
      osh.spreadOverLimitMinutes,
      osh.restAfterMinutes,
      osh.restMinutes,
    ]).toEqual([480, 2880, 720, 300, 30])
  })

  it('works in whole minutes: seconds are dropped, never rounded up', () => {
    const d = day('2026-03-10', [
      { id: 'a', punchType: 'IN', punchedAt: punch('IN', '2026-03-10 08:00').punchedAt },
      { id: 'b', punchType: 'OUT', punchedAt: punch('OUT', '2026-03-10 17:00').punchedAt - 1 },
    ])
    expect(d.workedMinutes).toBe(539)
    expect(d.pairs[0]!.minutes * MINUTE).toBeLessThanOrEqual(d.pairs[0]!.out! - d.pairs[0]!.in!)
  })
})
