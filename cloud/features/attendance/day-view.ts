import type { AttendanceDay, AttendanceDayDetail, DayState } from '../../../shared/attendance.js'
import { formatInZone, formatServerTime } from '../../../shared/time.js'
import type { DayRow } from './day-store.js'
import type { ComputedDay } from './engine/types.js'

/** A day's state, from its stored times (docs/decisions/0085-attendance-days-are-a-pure-function.md). */
export function dayState(
  row: Pick<DayRow, 'locked_at' | 'finalized_at' | 'scheduled_end'>,
  now: number,
): DayState {
  if (row.locked_at !== null) return 'LOCKED'
  if (row.finalized_at !== null) return 'FINAL'
  return now < row.scheduled_end ? 'OPEN' : 'PROVISIONAL'
}

export function readRecord(row: Pick<DayRow, 'record'>): ComputedDay {
  return JSON.parse(row.record) as ComputedDay
}

const at = (micros: number | null, timeZone: string) =>
  micros === null ? null : formatInZone(micros, timeZone)

/** The day as the API shows it, times in the tenant's zone. */
export function toAttendanceDay(
  row: DayRow,
  timeZone: string,
  now: number,
  record = readRecord(row),
): AttendanceDay {
  const flags: AttendanceDay['flags'] = [...record.flags]
  if (row.punches_after_lock > 0) flags.push('PUNCH_AFTER_LOCK')
  return {
    id: row.id,
    employeeCode: row.employee_code,
    workDate: row.work_date,
    shiftCode: record.shiftCode,
    scheduledStart: at(record.scheduledStart, timeZone),
    scheduledEnd: at(record.scheduledEnd, timeZone),
    dayType: record.dayType,
    status: record.status,
    state: dayState(row, now),
    firstIn: at(record.firstIn, timeZone),
    lastOut: at(record.lastOut, timeZone),
    workedMinutes: record.workedMinutes,
    breakMinutes: record.breakMinutes,
    lateMinutes: record.lateMinutes,
    earlyExitMinutes: record.earlyExitMinutes,
    overtimeMinutes: record.overtimeMinutes,
    spreadOverMinutes: record.spreadOverMinutes,
    flags,
    punches: record.punches.map((p) => ({
      id: p.id,
      punchType: p.punchType,
      punchedAt: formatInZone(p.punchedAt, timeZone),
      role: p.role,
    })),
    revision: row.revision,
    updatedAt: formatServerTime(row.updated_at),
  }
}

export function toAttendanceDayDetail(row: DayRow, timeZone: string, now: number): AttendanceDayDetail {
  const record = readRecord(row)
  const explanation = [...record.explanation]
  if (row.punches_after_lock > 0)
    explanation.push({
      field: 'state',
      text: `Locked: ${row.punches_after_lock} punch(es) arrived after payroll closed the period. They are kept in the punch log and not applied.`,
    })
  return {
    ...toAttendanceDay(row, timeZone, now, record),
    pairs: record.pairs.map((p) => ({
      in: at(p.in, timeZone),
      out: at(p.out, timeZone),
      minutes: p.minutes,
    })),
    explanation,
  }
}

/**
 * What differs between two computations of a day: the fields of the day record whose values
 * changed, and `pairs`. The explanation's wording alone is no change (it follows the figures), and
 * a moved capture window counts as a change but is not a field a consumer sees.
 */
export function changedFields(before: ComputedDay, after: ComputedDay): string[] {
  const keys = Object.keys(after) as (keyof ComputedDay)[]
  return keys.filter((k) => k !== 'explanation' && JSON.stringify(before[k]) !== JSON.stringify(after[k]))
}

/** Of the changed fields, those a webhook consumer can see on the day record or its detail. */
export function visibleChanges(changed: readonly string[]): string[] {
  return changed.filter((k) => k !== 'captureStart' && k !== 'captureEnd')
}
