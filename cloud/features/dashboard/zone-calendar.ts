import { formatInZone, zoneOffsetMinutes } from '../../../shared/time.js'

export const HOUR_MICROS = 3_600_000_000
export const DAY_MICROS = 86_400_000_000
const MINUTE_MICROS = 60_000_000

/** The zone's offset at an instant, in µs. */
function offsetAt(us: number, timeZone: string): number {
  return zoneOffsetMinutes(Math.floor(us / 1000), timeZone) * MINUTE_MICROS
}

/** The hours of a chart: `count` real hours, each starting on the hour of the zone's clock. */
export interface HourWindow {
  /** µs of the first hour's start; the window is [startMicros, startMicros + count hours). */
  startMicros: number
  endMicros: number
  /** Each hour's start as RFC 3339, with the zone's offset then. */
  labels: string[]
}

/**
 * The last `count` hours in `timeZone`, the current one last. Hours are real hours (a clock put back
 * shows its repeated hour twice, with two offsets), aligned to the zone's whole hours now: at :30
 * UTC for Asia/Kolkata. Only a zone whose offset changes by a part of an hour (Australia/Lord_Howe)
 * would see its hours before the change labelled at half past.
 */
export function hourWindow(atMicros: number, count: number, timeZone: string): HourWindow {
  const offset = offsetAt(atMicros, timeZone)
  const currentStart = Math.floor((atMicros + offset) / HOUR_MICROS) * HOUR_MICROS - offset
  const endMicros = currentStart + HOUR_MICROS
  const startMicros = endMicros - count * HOUR_MICROS
  const labels = Array.from({ length: count }, (_, i) =>
    formatInZone(startMicros + i * HOUR_MICROS, timeZone),
  )
  return { startMicros, endMicros, labels }
}

/** From `untilMicros` on (or to the end, when undefined) the wall clock is `offsetMicros` ahead of UTC. */
export interface OffsetSegment {
  untilMicros: number | undefined
  offsetMicros: number
}

/** The days of a chart: `count` dates of the zone's calendar, today last. */
export interface DayWindow {
  /** µs of the first day's local midnight; the window is [startMicros, endMicros). */
  startMicros: number
  endMicros: number
  /** The first day's midnight as wall-clock time read as UTC: a day's index is (wall - this) / day. */
  firstWallMicros: number
  /** The zone's offsets over the window, in order; one, unless its clocks change in the window. */
  offsets: OffsetSegment[]
  /** `YYYY-MM-DD`, oldest first. */
  labels: string[]
}

/** The instant at which the zone's wall clock shows `wallMicros` (read as UTC); the later one in a gap. */
function wallToInstant(wallMicros: number, timeZone: string): number {
  const guess = wallMicros - offsetAt(wallMicros, timeZone)
  return wallMicros - offsetAt(guess, timeZone)
}

/** The first µs (to the millisecond) in (lowMicros, highMicros] whose offset is not the offset at lowMicros. */
function changeBetween(lowMicros: number, highMicros: number, timeZone: string): number {
  const before = offsetAt(lowMicros, timeZone)
  let low = Math.floor(lowMicros / 1000)
  let high = Math.floor(highMicros / 1000)
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2)
    if (offsetAt(mid * 1000, timeZone) === before) low = mid
    else high = mid
  }
  return high * 1000
}

/** The last `count` days of `timeZone`'s calendar, today last, and its offsets over them. */
export function dayWindow(atMicros: number, count: number, timeZone: string): DayWindow {
  const today = Math.floor((atMicros + offsetAt(atMicros, timeZone)) / DAY_MICROS) * DAY_MICROS
  const firstWallMicros = today - (count - 1) * DAY_MICROS
  const startMicros = wallToInstant(firstWallMicros, timeZone)
  const endMicros = wallToInstant(today + DAY_MICROS, timeZone)
  // Clocks change at most a few times a year, never twice in a day: one look per day finds each.
  const offsets: OffsetSegment[] = []
  let current = offsetAt(startMicros, timeZone)
  for (let from = startMicros; from < endMicros; from += DAY_MICROS) {
    const to = Math.min(from + DAY_MICROS, endMicros) - 1
    const next = offsetAt(to, timeZone)
    if (next === current) continue
    offsets.push({ untilMicros: changeBetween(from, to, timeZone), offsetMicros: current })
    current = next
  }
  offsets.push({ untilMicros: undefined, offsetMicros: current })
  const labels = Array.from({ length: count }, (_, i) =>
    new Date((firstWallMicros + i * DAY_MICROS) / 1000).toISOString().slice(0, 10),
  )
  return { startMicros, endMicros, firstWallMicros, offsets, labels }
}
