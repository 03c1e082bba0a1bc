/**
 * Calendar dates `YYYY-MM-DD` of the tenant's zone. A calendar date has no zone of its own, so its
 * arithmetic is done on the UTC calendar, where every day is 24 hours long.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DAY_MS = 86_400_000

/** Days since 1970-01-01 of a calendar date; throws on anything that is not a real date. */
export function dayNumber(date: string): number {
  const m = DATE.exec(date)
  if (!m) throw new RangeError(`not a date YYYY-MM-DD: ${date}`)
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  // Date.UTC rolls 2026-02-30 over to March; a date that does not read back is not a date.
  if (new Date(ms).toISOString().slice(0, 10) !== date) throw new RangeError(`not a date: ${date}`)
  return ms / DAY_MS
}

/** The date of a day number. */
export function dateOfDayNumber(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10)
}

/** The date `days` after `date` (before it when negative). */
export function addDays(date: string, days: number): string {
  return dateOfDayNumber(dayNumber(date) + days)
}

/** 0 = Sunday … 6 = Saturday. */
export function weekdayOf(date: string): number {
  // 1970-01-01 was a Thursday.
  return (((dayNumber(date) + 4) % 7) + 7) % 7
}
