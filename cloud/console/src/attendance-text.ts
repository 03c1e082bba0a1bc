import type { AttendanceDay, DayPunch, DayState, DayStatusName } from './api-types.js'

// Typed by the server's lists: a status, state, flag or role added there does not compile here until it
// has a name.

export const STATUS_TEXT: Record<DayStatusName, string> = {
  PRESENT: 'Present',
  HALF_DAY: 'Half day',
  ABSENT: 'Absent',
  INCOMPLETE: 'Incomplete',
  OFF: 'Off',
}

/** The mark of a status in the month grid (its colour only repeats it). */
export const STATUS_MARK: Record<DayStatusName, string> = {
  PRESENT: 'P',
  HALF_DAY: 'H',
  ABSENT: 'A',
  INCOMPLETE: '!',
  OFF: '–',
}

export const STATUS_HINT: Record<DayStatusName, string> = {
  PRESENT: 'worked at least a full day',
  HALF_DAY: 'worked at least a half day, less than a full one',
  ABSENT: 'worked less than a half day, or not at all',
  INCOMPLETE: 'a punch is missing: the day needs a correction',
  OFF: 'weekly off or holiday, not worked',
}

export const STATE_TEXT: Record<DayState, string> = {
  OPEN: 'open',
  PROVISIONAL: 'provisional',
  FINAL: 'final',
  LOCKED: 'locked',
}

export const STATE_HINT: Record<DayState, string> = {
  OPEN: 'the shift has not ended yet',
  PROVISIONAL: 'late punches may still arrive',
  FINAL: 'no more punches are expected',
  LOCKED: 'payroll closed the period: punches arriving now are kept, not applied',
}

export const DAY_TYPE_TEXT: Record<AttendanceDay['dayType'], string> = {
  WORKING: 'Working day',
  WEEKLY_OFF: 'Weekly off',
  HOLIDAY: 'Holiday',
}

export const FLAG_TEXT: Record<AttendanceDay['flags'][number], string> = {
  MISSING_OUT: 'No OUT punch',
  MISSING_IN: 'No IN punch',
  DOUBLE_IN: 'Two IN punches in a row',
  ORPHAN_OUT: 'An OUT punch without an IN',
  SPREAD_OVER_EXCEEDED: 'Spread-over above the limit',
  NO_REST_INTERVAL: 'No rest interval',
  DAILY_LIMIT_EXCEEDED: 'Worked above the daily limit',
  WORKED_ON_OFF_DAY: 'Worked on an off day',
  LATE_ENTRY: 'Late entry',
  EARLY_EXIT: 'Early exit',
  PUNCH_AFTER_LOCK: 'Punches arrived after the lock',
}

export const ROLE_TEXT: Record<DayPunch['role'], string> = {
  IN: 'Counted as IN',
  OUT: 'Counted as OUT',
  DUPLICATE: 'Duplicate, not counted',
  IGNORED: 'Ignored',
}

/** "Present, final", what a grid cell says to a screen reader and in its tooltip. */
export function dayLabel(day: Pick<AttendanceDay, 'status' | 'state' | 'flags'>): string {
  const flags = day.flags.length > 0 ? `; ${day.flags.map((f) => FLAG_TEXT[f]).join(', ')}` : ''
  return `${STATUS_TEXT[day.status]}, ${STATE_TEXT[day.state]}${flags}`
}
