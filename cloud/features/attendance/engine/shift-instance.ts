import { parseLocalTimestamp } from '../../../../shared/time.js'
import { addDays } from './calendar-date.js'
import type { Shift } from './types.js'

export const MINUTE_MICROS = 60_000_000

/** One work date of one employee: its shift as scheduled that date, and where its punches are sought. */
export interface ShiftInstance {
  /** The local date on which the shift starts (Factories Act s.57(b): hours after midnight count in the previous day). */
  workDate: string
  shift: Shift | null
  scheduledStart: number | null
  scheduledEnd: number | null
  /** Punches in [captureStart, captureEnd) are sought for this date, in µs. */
  captureStart: number
  captureEnd: number
}

const WALL_TIME = /^([01]\d|2[0-3]):[0-5]\d$/

/** The instant the zone's clock shows `wall` on `date` (the later reading in a clock-change gap). */
function localInstant(date: string, wall: string, timeZone: string): number {
  if (!WALL_TIME.test(wall)) throw new RangeError(`not a wall time HH:MM: ${wall}`)
  const micros = parseLocalTimestamp(`${date} ${wall}:00`, timeZone)
  if (micros === undefined) throw new RangeError(`not a local time: ${date} ${wall} in ${timeZone}`)
  return micros
}

/**
 * The instance of `shift` on `workDate` in `timeZone`. Start and end are read on the zone's clock,
 * so a shift keeps its wall times on the night the clocks change (and is an hour shorter or longer).
 * An end at or before the start is on the next date.
 *
 * A scheduled shift's window includes both its ends: an IN exactly `earlyWindowMinutes` before the
 * start and an OUT exactly `lateWindowMinutes` after the end both count. `captureEnd` is exclusive,
 * so it lies 1 µs after the last instant counted. An unscheduled date captures its local calendar
 * day, [00:00, next 00:00).
 *
 * Windows of neighbouring dates may overlap here; `attributePunches` clips them.
 */
export function shiftInstance(workDate: string, shift: Shift | null, timeZone: string): ShiftInstance {
  if (!shift) {
    return {
      workDate,
      shift: null,
      scheduledStart: null,
      scheduledEnd: null,
      captureStart: localInstant(workDate, '00:00', timeZone),
      captureEnd: localInstant(addDays(workDate, 1), '00:00', timeZone),
    }
  }
  const start = localInstant(workDate, shift.start, timeZone)
  // `HH:MM` strings compare as times of day.
  const endDate = shift.end <= shift.start ? addDays(workDate, 1) : workDate
  const end = localInstant(endDate, shift.end, timeZone)
  return {
    workDate,
    shift,
    scheduledStart: start,
    scheduledEnd: end,
    captureStart: start - Math.max(0, shift.earlyWindowMinutes) * MINUTE_MICROS,
    captureEnd: end + Math.max(0, shift.lateWindowMinutes) * MINUTE_MICROS + 1,
  }
}
