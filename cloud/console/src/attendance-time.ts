import { formatInZone, parseLocalTimestamp } from '../../../shared/time.js'

const pad = (n: number) => String(n).padStart(2, '0')

/** 485 → "8:05": a duration in hours and minutes. */
export function formatMinutes(minutes: number): string {
  const sign = minutes < 0 ? '-' : ''
  const m = Math.abs(Math.round(minutes))
  return `${sign}${Math.floor(m / 60)}:${pad(m % 60)}`
}

/** "2026-11-21T09:02:00+05:30" → "09:02", the wall time as the server wrote it (the tenant's time zone). */
export function wallTime(iso: string): string {
  return iso.slice(11, 16)
}

/** "2026-11-21T09:02:00+05:30" → "2026-11-21", the wall date as the server wrote it. */
export function wallDate(iso: string): string {
  return iso.slice(0, 10)
}

/** A calendar date (`YYYY-MM-DD`) for people, e.g. "Sat, 21 Nov 2026"; the text itself if it is not one. */
export function formatWorkDate(date: string, style: 'long' | 'short' = 'long'): string {
  const ms = dateMillis(date)
  if (ms === undefined) return date
  const format =
    style === 'long'
      ? { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' }
      : { day: 'numeric', month: 'short', timeZone: 'UTC' }
  return new Intl.DateTimeFormat(undefined, format as Intl.DateTimeFormatOptions).format(ms)
}

/**
 * A punch's or a pair's time within a work day: "09:02", or "06:00 (22 Nov)" when it falls on another
 * date (a night shift's end).
 */
export function timeInDay(iso: string | null, workDate: string): string {
  if (!iso) return '—'
  const date = wallDate(iso)
  return date === workDate ? wallTime(iso) : `${wallTime(iso)} (${formatWorkDate(date, 'short')})`
}

/** Midnight UTC of a `YYYY-MM-DD`, or undefined if it is not a real date. */
export function dateMillis(date: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date)
  if (!m) return undefined
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  return new Date(ms).toISOString().slice(0, 10) === date ? ms : undefined
}

/** Today's date in `timeZone`, `YYYY-MM-DD`. */
export function todayIn(timeZone: string, now = Date.now()): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(now)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return `${part('year')}-${part('month')}-${part('day')}`
}

/**
 * A wall date and time in the tenant's time zone (`2026-11-21`, `09:02`) as RFC 3339 with that zone's offset
 * then ("2026-11-21T09:02:00+05:30"), which the punch API needs; undefined if they are not a date and time.
 */
export function tenantLocalToRfc3339(date: string, time: string, timeZone: string): string | undefined {
  if (!/^\d{2}:\d{2}$/.test(time)) return undefined
  const micros = parseLocalTimestamp(`${date} ${time}:00`, timeZone)
  return micros === undefined ? undefined : formatInZone(micros, timeZone)
}
