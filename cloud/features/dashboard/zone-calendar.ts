import { formatInZone, zoneOffsetMinutes } from '../../../shared/time.js'

export const HOUR_US = 3_600_000_000
export const DAY_US = 86_400_000_000
const MINUTE_US = 60_000_000

/** The zone's offset at an instant, in µs. */
function offsetAt(us: number, timeZone: string): number {
  return zoneOffsetMinutes(Math.floor(us / 1000), timeZone) * MINUTE_US
}

/** The hours of a chart: `count` real hours, each starting on the hour of the zone's clock. */
export interface HourWindow {
  /** µs of the first hour's start; the window is [startUs, startUs + count hours). */
  startUs: number
  endUs: number
  /** Each hour's start as RFC 3339, with the zone's offset then. */
  labels: string[]
}

/**
 * The last `count` hours in `timeZone`, the current one last. Hours are real hours (a clock put back
 * shows its repeated hour twice, with two offsets), aligned to the zone's whole hours now: at :30
 * UTC for Asia/Kolkata. Only a zone whose offset changes by a part of an hour (Australia/Lord_Howe)
 * would see its hours before the change labelled at half past.
 */
export function hourWindow(nowUs: number, count: number, timeZone: string): HourWindow {
  const offset = offsetAt(nowUs, timeZone)
  const currentStart = Math.floor((nowUs + offset) / HOUR_US) * HOUR_US - offset
  const endUs = currentStart + HOUR_US
  const startUs = endUs - count * HOUR_US
  const labels = Array.from({ length: count }, (_, i) => formatInZone(startUs + i * HOUR_US, timeZone))
  return { startUs, endUs, labels }
}

/** From `untilUs` on (or to the end, when undefined) the wall clock is `offsetUs` ahead of UTC. */
export interface OffsetSegment {
  untilUs: number | undefined
  offsetUs: number
}

/** The days of a chart: `count` dates of the zone's calendar, today last. */
export interface DayWindow {
  /** µs of the first day's local midnight; the window is [startUs, endUs). */
  startUs: number
  endUs: number
  /** The first day's midnight as wall-clock time read as UTC: a day's index is (wall - this) / day. */
  firstWallUs: number
  /** The zone's offsets over the window, in order; one, unless its clocks change in the window. */
  offsets: OffsetSegment[]
  /** `YYYY-MM-DD`, oldest first. */
  labels: string[]
}

/** The instant at which the zone's wall clock shows `wallUs` (read as UTC); the later one in a gap. */
function wallToInstant(wallUs: number, timeZone: string): number {
  const guess = wallUs - offsetAt(wallUs, timeZone)
  return wallUs - offsetAt(guess, timeZone)
}

/** The first µs (to the millisecond) in (lowUs, highUs] whose offset is not the offset at lowUs. */
function changeBetween(lowUs: number, highUs: number, timeZone: string): number {
  const before = offsetAt(lowUs, timeZone)
  let low = Math.floor(lowUs / 1000)
  let high = Math.floor(highUs / 1000)
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2)
    if (offsetAt(mid * 1000, timeZone) === before) low = mid
    else high = mid
  }
  return high * 1000
}

/** The last `count` days of `timeZone`'s calendar, today last, and its offsets over them. */
export function dayWindow(nowUs: number, count: number, timeZone: string): DayWindow {
  const today = Math.floor((nowUs + offsetAt(nowUs, timeZone)) / DAY_US) * DAY_US
  const firstWallUs = today - (count - 1) * DAY_US
  const startUs = wallToInstant(firstWallUs, timeZone)
  const endUs = wallToInstant(today + DAY_US, timeZone)
  // Clocks change at most a few times a year, never twice in a day: one look per day finds each.
  const offsets: OffsetSegment[] = []
  let current = offsetAt(startUs, timeZone)
  for (let from = startUs; from < endUs; from += DAY_US) {
    const to = Math.min(from + DAY_US, endUs) - 1
    const next = offsetAt(to, timeZone)
    if (next === current) continue
    offsets.push({ untilUs: changeBetween(from, to, timeZone), offsetUs: current })
    current = next
  }
  offsets.push({ untilUs: undefined, offsetUs: current })
  const labels = Array.from({ length: count }, (_, i) =>
    new Date((firstWallUs + i * DAY_US) / 1000).toISOString().slice(0, 10),
  )
  return { startUs, endUs, firstWallUs, offsets, labels }
}
