import { attributePunches } from './attribute-punches.js'
import { dateOfDayNumber, dayNumber, weekdayOf } from './calendar-date.js'
import { computeDay } from './compute-day.js'
import { shiftInstance } from './shift-instance.js'
import type { ComputedDay, DaysInput, DayType, Policy } from './types.js'

/** HOLIDAY when the calendar has one, else WEEKLY_OFF on the policy's weekly offs, else WORKING. */
export function dayTypeOf(date: string, isHoliday: (date: string) => boolean, policy: Policy): DayType {
  if (isHoliday(date)) return 'HOLIDAY'
  return policy.weeklyOffDays.includes(weekdayOf(date)) ? 'WEEKLY_OFF' : 'WORKING'
}

/**
 * Computes the requested dates of one employee (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 * The dates from the day before the first to the day after the last are laid out as consecutive
 * instances, so that a punch near a date's edge is weighed against both neighbours; only the
 * requested dates are returned, in the order asked. The result depends on the set of punches
 * alone: the same punches in any order, or re-sent, give a deep-equal result.
 */
export function computeDays(input: DaysInput): ComputedDay[] {
  if (input.dates.length === 0) return []
  const numbers = input.dates.map(dayNumber)
  const first = Math.min(...numbers) - 1
  const last = Math.max(...numbers) + 1
  const instances = []
  for (let day = first; day <= last; day++) {
    const date = dateOfDayNumber(day)
    instances.push(shiftInstance(date, input.shiftFor(date), input.timeZone))
  }
  const attributed = attributePunches(instances, input.punches, input.policy)
  return numbers.map((day) => {
    const instance = attributed[day - first]!
    return computeDay({
      employeeCode: input.employeeCode,
      timeZone: input.timeZone,
      instance,
      dayType: dayTypeOf(instance.workDate, input.isHoliday, input.policy),
      punches: instance.punches,
      policy: input.policy,
    })
  })
}
