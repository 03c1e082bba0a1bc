import { parseLocalTimestamp, zoneOffsetMinutes } from '../../../shared/time.js'
import { dateOfDayNumber, dayNumber } from './engine/calendar-date.js'

/**
 * Calendar dates (`YYYY-MM-DD`) as the attendance service needs them beyond the engine's own
 * arithmetic (engine/calendar-date.ts): checking dates that come in requests, and turning dates into
 * instants, and back, through the tenant's zone.
 */

export { addDays, weekdayOf } from './engine/calendar-date.js'

/** True for a real calendar date (the schemas' pattern lets 2026-02-31 through). */
export function isCalendarDate(date: string): boolean {
  try {
    dayNumber(date)
    return true
  } catch {
    return false
  }
}

/** Whole days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return dayNumber(to) - dayNumber(from)
}

/** Every date from `from` to `to`, both included. */
export function datesFrom(from: string, to: string): string[] {
  const first = dayNumber(from)
  return Array.from({ length: Math.max(0, dayNumber(to) - first + 1) }, (_, i) => dateOfDayNumber(first + i))
}

/** The local date, in `timeZone`, of an instant in µs. */
export function localDate(micros: number, timeZone: string): string {
  const ms = Math.floor(micros / 1000)
  return dateOfDayNumber(Math.floor((ms + zoneOffsetMinutes(ms, timeZone) * 60_000) / 86_400_000))
}

/** The instant (µs) a local date begins in `timeZone`. */
export function startOfDate(date: string, timeZone: string): number {
  const at = parseLocalTimestamp(`${date} 00:00:00`, timeZone)
  if (at === undefined) throw new Error(`not a date: ${date}`)
  return at
}
