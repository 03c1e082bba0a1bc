import { parseLocalTimestamp, parseTimestamp } from '../../shared/time.js'
import { DeviceCommandError } from './device-report.js'

/** A backfill asks a terminal for at most this much of its log at once. */
const MAX_SPAN_DAYS = 400
const DAY_MICROS = 86_400_000_000

/**
 * One end of a backfill range as IT staff type it: RFC 3339 with an offset, or a local date and
 * time in the device's zone (`2026-11-20`, `2026-11-20 09:00`, `2026-11-20T09:00:00`). A date
 * alone is the start of that day for `from` and its last second for `to`, so `--from 2026-11-01
 * --to 2026-11-20` takes in the 20th.
 */
function bound(text: string, timeZone: string, end: boolean): number | undefined {
  const trimmed = text.trim()
  const exact = parseTimestamp(trimmed)
  if (exact !== undefined) return exact
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(trimmed)
  if (!m) return undefined
  const time = m[2] === undefined ? (end ? '23:59:59' : '00:00:00') : `${m[2]}:${m[3]}:${m[4] ?? '00'}`
  return parseLocalTimestamp(`${m[1]} ${time}`, timeZone)
}

/** The range in µs, or a DeviceCommandError saying what is wrong with it. */
export function parseBackfillRange(
  from: string,
  to: string,
  timeZone: string,
  nowMicros: number,
): { from: number; to: number } {
  const start = bound(from, timeZone, false)
  const end = bound(to, timeZone, true)
  const wrong = (message: string) => new DeviceCommandError('invalid_range', message)
  if (start === undefined)
    throw wrong(
      `from "${from.slice(0, 40)}" is not a date or time (2026-11-20, 2026-11-20 09:00, or RFC 3339)`,
    )
  if (end === undefined)
    throw wrong(`to "${to.slice(0, 40)}" is not a date or time (2026-11-20, 2026-11-20 18:00, or RFC 3339)`)
  if (start > end) throw wrong('from is after to')
  if (end - start > MAX_SPAN_DAYS * DAY_MICROS)
    throw wrong(`the range is longer than ${MAX_SPAN_DAYS} days: ask for it in parts`)
  if (start > nowMicros) throw wrong('from is in the future')
  return { from: start, to: end }
}
