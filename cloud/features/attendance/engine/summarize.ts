import { addDays, weekdayOf } from './calendar-date.js'
import type { ComputedDay, PeriodSummary, Policy } from './types.js'

/** The first date of the week holding `date`, weeks beginning on `policy.weekStart`. */
export function weekStartOf(date: string, weekStart: number): string {
  return addDays(date, -((weekdayOf(date) - weekStart + 7) % 7))
}

/**
 * Totals one employee's days over [from, to] (inclusive `YYYY-MM-DD`), for payroll.
 *
 * Weekly overtime (Factories Act s.59: beyond forty-eight hours in a week) is, per week,
 * max(0, week's worked − week's daily overtime − weekly limit): time already paid as daily overtime
 * is not paid again. A week is counted only in the period that holds its last day, so two
 * consecutive periods split mid-week never both count it. For that week to be whole, `days` must
 * include its dates before `from`: the caller loads days from the start of the week holding
 * `from`. Days before `from` count towards their week only; days after `to` are ignored.
 */
export function summarize(
  days: readonly ComputedDay[],
  policy: Policy,
  from: string,
  to: string,
): PeriodSummary {
  const inPeriod = days.filter((d) => d.workDate >= from && d.workDate <= to)
  const count = (status: ComputedDay['status']) => inPeriod.filter((d) => d.status === status).length
  const sum = (
    list: readonly ComputedDay[],
    field: 'workedMinutes' | 'overtimeMinutes' | 'lateMinutes' | 'earlyExitMinutes',
  ) => list.reduce((total, d) => total + d[field], 0)

  const byWeek = new Map<string, ComputedDay[]>()
  for (const day of days) {
    if (day.workDate > to) continue
    const week = weekStartOf(day.workDate, policy.weekStart)
    const list = byWeek.get(week)
    if (list) list.push(day)
    else byWeek.set(week, [day])
  }
  const weeks: PeriodSummary['weeks'] = []
  for (const [weekStart, weekDays] of [...byWeek].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const lastDay = addDays(weekStart, 6)
    if (lastDay < from || lastDay > to) continue
    const workedMinutes = sum(weekDays, 'workedMinutes')
    const dailyOvertimeMinutes = sum(weekDays, 'overtimeMinutes')
    const weeklyOvertimeMinutes = Math.max(
      0,
      workedMinutes - dailyOvertimeMinutes - policy.weeklyLimitMinutes,
    )
    weeks.push({ weekStart, workedMinutes, dailyOvertimeMinutes, weeklyOvertimeMinutes })
  }

  return {
    employeeCode: days[0]?.employeeCode ?? '',
    from,
    to,
    days: inPeriod.length,
    present: count('PRESENT'),
    halfDay: count('HALF_DAY'),
    absent: count('ABSENT'),
    incomplete: count('INCOMPLETE'),
    off: count('OFF'),
    workedMinutes: sum(inPeriod, 'workedMinutes'),
    lateMinutes: sum(inPeriod, 'lateMinutes'),
    earlyExitMinutes: sum(inPeriod, 'earlyExitMinutes'),
    dailyOvertimeMinutes: sum(inPeriod, 'overtimeMinutes'),
    weeklyOvertimeMinutes: weeks.reduce((total, w) => total + w.weeklyOvertimeMinutes, 0),
    weeks,
  }
}
