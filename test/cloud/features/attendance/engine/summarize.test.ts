import { describe, expect, it } from 'vitest'
import { defaultPolicy } from '../../../../../cloud/features/attendance/engine/policy-defaults.js'
import { summarize } from '../../../../../cloud/features/attendance/engine/summarize.js'
import type { ComputedDay, EnginePunch } from '../../../../../cloud/features/attendance/engine/types.js'
import { days, punch, shift } from './engine-fixtures.js'

/** Dates from `from`, `count` of them. */
function dateRange(from: string, count: number): string[] {
  const start = Date.parse(`${from}T00:00:00Z`)
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10))
}

/**
 * Two weeks, Monday 2 – Sunday 15 March 2026, of 08:00–17:00 (nine hours, no break) Monday to
 * Saturday, Sundays off: 3240 minutes a week, no daily overtime under the Act's 540.
 */
function twoWeeks(): ComputedDay[] {
  const dates = dateRange('2026-03-02', 14)
  const punches: EnginePunch[] = dates
    .filter((d) => new Date(`${d}T00:00:00Z`).getUTCDay() !== 0)
    .flatMap((d) => [punch('IN', `${d} 08:00`), punch('OUT', `${d} 17:00`)])
  return days(dates, punches, { shiftFor: shift(), policy: defaultPolicy('FACTORIES_ACT_1948') })
}

describe('summarize', () => {
  const policy = defaultPolicy('FACTORIES_ACT_1948')

  it('a six-day week of nine hours is 360 minutes of weekly overtime beyond 48 h, and no daily overtime', () => {
    const all = twoWeeks()
    const summary = summarize(all, policy, '2026-03-02', '2026-03-08')
    expect(summary.days).toBe(7)
    expect(summary.present).toBe(6)
    expect(summary.off).toBe(1)
    expect(summary.workedMinutes).toBe(3240)
    expect(summary.dailyOvertimeMinutes).toBe(0)
    expect(summary.weeklyOvertimeMinutes).toBe(360)
    expect(summary.weeks).toEqual([
      { weekStart: '2026-03-02', workedMinutes: 3240, dailyOvertimeMinutes: 0, weeklyOvertimeMinutes: 360 },
    ])
  })

  it('two periods split mid-week count the week once, in the period holding its last day', () => {
    const all = twoWeeks()
    // 2–4 March, then 5–15 March (with the days from the week's start, as the service loads them).
    const first = summarize(all, policy, '2026-03-02', '2026-03-04')
    const second = summarize(all, policy, '2026-03-05', '2026-03-15')
    expect(first.weeklyOvertimeMinutes).toBe(0)
    expect(first.weeks).toEqual([])
    expect(second.weeks.map((w) => w.weekStart)).toEqual(['2026-03-02', '2026-03-09'])
    expect(second.weeklyOvertimeMinutes).toBe(720)
    expect(first.weeklyOvertimeMinutes + second.weeklyOvertimeMinutes).toBe(
      summarize(all, policy, '2026-03-02', '2026-03-15').weeklyOvertimeMinutes,
    )
    // The period's own totals hold its own days only.
    expect(first.workedMinutes + second.workedMinutes).toBe(2 * 3240)
    // Split again on the Sunday: each period counts its own week.
    const a = summarize(all, policy, '2026-03-02', '2026-03-08')
    const b = summarize(all, policy, '2026-03-09', '2026-03-15')
    expect([a.weeklyOvertimeMinutes, b.weeklyOvertimeMinutes]).toEqual([360, 360])
  })

  it('does not count daily overtime again as weekly overtime', () => {
    // Ten hours a day, six days: 60 of daily overtime each (360), 3600 worked; 3600 − 360 − 2880 = 360.
    const dates = dateRange('2026-03-02', 7)
    const punches = dates.slice(0, 6).flatMap((d) => [punch('IN', `${d} 08:00`), punch('OUT', `${d} 18:00`)])
    const all = days(dates, punches, { shiftFor: shift(), policy })
    const summary = summarize(all, policy, '2026-03-02', '2026-03-08')
    expect(summary.dailyOvertimeMinutes).toBe(360)
    expect(summary.weeklyOvertimeMinutes).toBe(360)
  })

  it('weeks begin on the policy’s weekStart', () => {
    const all = twoWeeks()
    const sundayWeeks = summarize(all, { ...policy, weekStart: 0 }, '2026-03-02', '2026-03-15')
    // Weeks Sunday 1 – Saturday 7 March (incomplete: 1 March was not loaded) and 8–14 March.
    expect(sundayWeeks.weeks.map((w) => w.weekStart)).toEqual(['2026-03-01', '2026-03-08'])
  })
})
