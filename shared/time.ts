/**
 * Time in Hajri is carried as integer microseconds since the Unix epoch ("µs"): precise enough to
 * give every change in a tenant its own `updatedAt` (incremental sync,
 * docs/decisions/0009-incremental-sync.md) and still exact in a JavaScript number for the years we accept.
 */

// RFC 3339 §5.6 date-time. The offset is required: a punch without one is ambiguous
// (docs/decisions/0010-rfc-3339-times.md).
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/

/** Years outside this range are refused: they are never a real punch or sync point, and µs stay exact. */
export const MIN_YEAR = 1900
export const MAX_YEAR = 2199

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
}

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0)
}

/** Milliseconds since the epoch of a UTC calendar time; unlike Date.UTC, years 0–99 are literal. */
function utcMillis(year: number, month: number, day: number, hour: number, minute: number, second: number) {
  // Date.UTC reads years 0–99 as 1900–1999; from 100 on it is exact, and far cheaper than a Date.
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second)
  const d = new Date(0)
  d.setUTCFullYear(year, month - 1, day)
  d.setUTCHours(hour, minute, second, 0)
  return d.getTime()
}

/** The six calendar fields of a matched `YYYY-MM-DD?HH:MM:SS`, if they are a time we accept. */
function calendarFields(m: RegExpExecArray, maxSecond: number): number[] | undefined {
  const fields = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])]
  const [year, month, day, hour, minute, second] = fields as [number, number, number, number, number, number]
  if (year < MIN_YEAR || year > MAX_YEAR) return undefined
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined
  if (hour > 23 || minute > 59 || second > maxSecond) return undefined
  return fields
}

/** Parses an RFC 3339 timestamp with offset into µs, or returns undefined if it is not one. */
export function parseTimestamp(text: string): number | undefined {
  const m = RFC3339.exec(text)
  if (!m) return undefined
  // Second 60 is a leap second (RFC 3339 §5.7); Date rolls it into the next minute.
  const fields = calendarFields(m, 60)
  if (!fields) return undefined
  const [year, month, day, hour, minute, second] = fields as [number, number, number, number, number, number]
  let offsetMinutes = 0
  if (m[8] === undefined) {
    const offsetHours = Number(m[10])
    const offsetMins = Number(m[11])
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0').slice(0, 6))
  const ms = utcMillis(year, month, day, hour, minute, second) - offsetMinutes * 60_000
  return ms * 1000 + micros
}

const LOCAL_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})$/

/** Parses a device's local wall time `YYYY-MM-DD HH:mm:ss` as read in `timeZone`, into µs. */
export function parseLocalTimestamp(text: string, timeZone: string): number | undefined {
  const m = LOCAL_TIMESTAMP.exec(text)
  if (!m) return undefined
  const fields = calendarFields(m, 59)
  if (!fields) return undefined
  const [year, month, day, hour, minute, second] = fields as [number, number, number, number, number, number]
  const wall = utcMillis(year, month, day, hour, minute, second)
  // The offset at the wall time itself, found by guessing with the offset at `wall` read as UTC and
  // correcting once: right for every instant except the skipped hour of a DST gap.
  const guess = wall - zoneOffsetMinutes(wall, timeZone) * 60_000
  const ms = wall - zoneOffsetMinutes(guess, timeZone) * 60_000
  return ms * 1000
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>()

/** The offset at one instant, asked of Intl (a few microseconds; cached by the caller). */
function intlOffsetMinutes(ms: number, timeZone: string): number {
  let formatter = offsetFormatters.get(timeZone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
    offsetFormatters.set(timeZone, formatter)
  }
  const name = formatter.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT'
  // Historical local mean times have seconds (Asia/Kolkata before 1906 was +05:21:10); RFC 3339
  // offsets do not, so those round to the minute.
  const m = /^GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(name)
  if (!m) return 0
  const minutes = Number(m[2]) * 60 + Number(m[3]) + Math.round(Number(m[4] ?? 0) / 60)
  return (m[1] === '-' ? -1 : 1) * minutes
}

const DAY_MS = 86_400_000
const MAX_CACHED_DAYS = 10_000
/** `zone|UTC day` → the offset, for days on which the zone's offset does not change. */
const dayOffsets = new Map<string, number>()
/** The last day found in dayOffsets (only days of one offset are ever put here). */
let last = { zone: '', day: Number.NaN, offset: 0 }

/**
 * The offset from UTC, in minutes, of `timeZone` at the instant `ms`. A day whose offset is the
 * same at its first and last millisecond has one offset throughout (no zone changes twice in a
 * day), so it is cached: punches cluster on a few days, and formatting them is on the hot path.
 */
export function zoneOffsetMinutes(ms: number, timeZone: string): number {
  if (timeZone === 'UTC') return 0
  const day = Math.floor(ms / DAY_MS)
  // The punches of one upload are mostly of one day: the last answer first, before any key is built.
  if (day === last.day && timeZone === last.zone) return last.offset
  const key = `${timeZone}|${day}`
  const cached = dayOffsets.get(key)
  if (cached !== undefined) {
    last = { zone: timeZone, day, offset: cached }
    return cached
  }
  const start = intlOffsetMinutes(day * DAY_MS, timeZone)
  if (start !== intlOffsetMinutes(day * DAY_MS + DAY_MS - 1, timeZone)) return intlOffsetMinutes(ms, timeZone)
  if (dayOffsets.size >= MAX_CACHED_DAYS) dayOffsets.clear()
  dayOffsets.set(key, start)
  last = { zone: timeZone, day, offset: start }
  return start
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return true
  } catch {
    return false
  }
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/**
 * Formats µs as RFC 3339. By default the fraction is left out when it is zero, written to the
 * millisecond when that is exact, else to the microsecond, so device times read as devices wrote
 * them. `fixedFraction` always writes six digits, so that UTC stamps also sort as strings.
 */
export function formatTimestamp(micros: number, offsetMinutes = 0, fixedFraction = false): string {
  const ms = Math.floor(micros / 1000)
  const d = new Date(ms + offsetMinutes * 60_000)
  const fraction = micros - Math.floor(micros / 1_000_000) * 1_000_000
  let frac = ''
  if (fixedFraction) frac = `.${pad(fraction, 6)}`
  else if (fraction !== 0)
    frac = fraction % 1000 === 0 ? `.${pad(fraction / 1000, 3)}` : `.${pad(fraction, 6)}`
  let offset = 'Z'
  if (offsetMinutes !== 0) {
    const abs = Math.abs(offsetMinutes)
    offset = `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`
  }
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${frac}${offset}`
  )
}

/** Formats µs as RFC 3339 in the offset that `timeZone` had at that instant. */
export function formatInZone(micros: number, timeZone: string): string {
  return formatTimestamp(micros, zoneOffsetMinutes(Math.floor(micros / 1000), timeZone))
}

/** A server-assigned UTC stamp (createdAt, updatedAt, receivedAt): always six fraction digits. */
export function formatServerTime(micros: number): string {
  return formatTimestamp(micros, 0, true)
}

export function nowMicros(): number {
  return Date.now() * 1000
}
