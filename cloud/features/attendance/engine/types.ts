/**
 * The attendance engine's inputs and outputs (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 * The engine is pure: a day is a function of (punches, shift, policy, calendar), so computing it twice
 * gives the same record. Times are integer microseconds since the epoch, as everywhere in the cloud;
 * durations in the output are whole minutes.
 */

/** How a day's punches pair into worked intervals. */
export type PairingMode =
  /** IN opens, OUT closes; a second IN while open is a duplicate (the first is kept), an OUT with nothing open is an orphan. */
  | 'TOLERANT'
  /** First IN to last OUT, whatever lies between (a fixed unpaid break is deducted). */
  | 'FIRST_LAST'
  /** Directions are ignored: punches alternate IN, OUT, IN, OUT in time order. */
  | 'ALTERNATE'

export type LegalRegime = 'FACTORIES_ACT_1948' | 'OSH_CODE_2020'

/** What overtime is measured against. */
export type OvertimeBasis =
  /** Time worked beyond the policy's daily limit (Factories Act s.59: beyond 9 h). */
  | 'DAILY_LIMIT'
  /** Time worked beyond the shift's scheduled work (its length less its unpaid break). */
  | 'SHIFT'

/** NONE: exact minutes. HALF_HOUR: the OSH draft rule, 15–30 min counts as 30, more than 30 as 60, per started hour. */
export type OvertimeRounding = 'NONE' | 'HALF_HOUR'

export interface Shift {
  code: string
  /** Local wall time `HH:MM`. */
  start: string
  /** Local wall time `HH:MM`; at or before `start`, the shift ends the next day. */
  end: string
  unpaidBreakMinutes: number
  /** Punches this long before the start count for this shift. */
  earlyWindowMinutes: number
  /** Punches this long after the end count for this shift. */
  lateWindowMinutes: number
  /** An IN this long after the start is not late. */
  lateGraceMinutes: number
  /** An OUT this long before the end is not an early exit. */
  earlyExitGraceMinutes: number
}

/** The rules a tenant, or an employee group, computes days by. Every limit is explicit here: the regime's defaults are applied before the engine sees it. */
export interface Policy {
  legalRegime: LegalRegime
  /** At least this many worked minutes is a full day (PRESENT). */
  fullDayMinutes: number
  /** At least this many (and less than full) is HALF_DAY; fewer is ABSENT. */
  halfDayMinutes: number
  pairing: PairingMode
  /** A punch within this many seconds of the previous kept punch of the same direction is a duplicate. */
  duplicateWindowSeconds: number
  /** Whether time before the shift's start counts as work (and so possibly overtime). */
  countEarlyArrival: boolean
  overtimeBasis: OvertimeBasis
  /** With basis SHIFT: early arrival or late leaving up to this many minutes, on each side, is not overtime. */
  overtimeToleranceMinutes: number
  overtimeRounding: OvertimeRounding
  /** s.51 / OSH: weekly hours beyond which time is overtime. */
  weeklyLimitMinutes: number
  /** s.54 / OSH: daily hours beyond which time is overtime (basis DAILY_LIMIT) and DAILY_LIMIT_EXCEEDED is flagged. */
  dailyLimitMinutes: number
  /** s.56: first IN to last OUT above this flags SPREAD_OVER_EXCEEDED. */
  spreadOverLimitMinutes: number
  /** s.55: a stretch of work longer than this without a rest of at least `restMinutes` flags NO_REST_INTERVAL. */
  restAfterMinutes: number
  restMinutes: number
  /** 0 = Sunday … 6 = Saturday: the day a week for weekly overtime begins. */
  weekStart: number
  /** Days of the week (0 = Sunday) that are weekly offs. */
  weeklyOffDays: number[]
  /** After the shift's late window, how long punches may still arrive before a day is final. */
  finalizeAfterMinutes: number
  /** An OUT attaches to an earlier day's open IN when within this many minutes of it: a night shift's OUT must not land on the next day's evening shift. */
  maxShiftMinutes: number
}

export type DayType = 'WORKING' | 'WEEKLY_OFF' | 'HOLIDAY'
export type DayStatus = 'PRESENT' | 'HALF_DAY' | 'ABSENT' | 'INCOMPLETE' | 'OFF'
export type DayFlag =
  | 'MISSING_OUT'
  | 'MISSING_IN'
  | 'DOUBLE_IN'
  | 'ORPHAN_OUT'
  | 'SPREAD_OVER_EXCEEDED'
  | 'NO_REST_INTERVAL'
  | 'DAILY_LIMIT_EXCEEDED'
  | 'WORKED_ON_OFF_DAY'
  | 'LATE_ENTRY'
  | 'EARLY_EXIT'
export type PunchRole = 'IN' | 'OUT' | 'DUPLICATE' | 'IGNORED'

export interface EnginePunch {
  id: string
  punchType: 'IN' | 'OUT'
  punchedAt: number
}

/** One worked interval. `in` or `out` is null where the punch is missing. */
export interface Pair {
  in: number | null
  out: number | null
  minutes: number
}

export interface Explanation {
  /** The figure it explains: `workedMinutes`, `status`, `overtimeMinutes`, … */
  field: string
  text: string
}

/** A day as the engine computes it: no state, revision or timestamps (the service keeps those). */
export interface ComputedDay {
  employeeCode: string
  /** `YYYY-MM-DD`: the local date on which the scheduled shift starts (Factories Act s.57). */
  workDate: string
  shiftCode: string | null
  scheduledStart: number | null
  scheduledEnd: number | null
  /**
   * The punches sought for this day lie in [captureStart, captureEnd), clipped against the
   * neighbouring dates. Two kinds may lie outside it: an OUT that closes this day's still-open IN
   * (within `maxShiftMinutes`), and a repeat of a punch counted here.
   */
  captureStart: number
  captureEnd: number
  dayType: DayType
  status: DayStatus
  firstIn: number | null
  lastOut: number | null
  workedMinutes: number
  breakMinutes: number
  lateMinutes: number
  earlyExitMinutes: number
  overtimeMinutes: number
  spreadOverMinutes: number
  flags: DayFlag[]
  punches: { id: string; punchType: 'IN' | 'OUT'; punchedAt: number; role: PunchRole }[]
  pairs: Pair[]
  explanation: Explanation[]
}

export interface DaysInput {
  employeeCode: string
  timeZone: string
  /** The work dates wanted, `YYYY-MM-DD`, in order. Neighbouring dates are considered for attribution but not returned. */
  dates: string[]
  /** The shift scheduled on a date, or null: an unscheduled day captures the local calendar day. */
  shiftFor: (date: string) => Shift | null
  /** HOLIDAY when the calendar has one that date; else WEEKLY_OFF or WORKING from the policy. */
  isHoliday: (date: string) => boolean
  policy: Policy
  /** Every punch of the employee from two days before the first date to two days after the last, voided ones removed, in any order. */
  punches: EnginePunch[]
}

/** Totals over a period, for payroll. */
export interface PeriodSummary {
  employeeCode: string
  from: string
  to: string
  days: number
  present: number
  halfDay: number
  absent: number
  incomplete: number
  off: number
  workedMinutes: number
  lateMinutes: number
  earlyExitMinutes: number
  /** Sum of the days' overtime. */
  dailyOvertimeMinutes: number
  /** Per week: max(0, week's worked − its daily overtime − weekly limit), counted in the period holding the week's last day only. */
  weeklyOvertimeMinutes: number
  /** Weeks whose weekly overtime is counted here, by their first date. */
  weeks: {
    weekStart: string
    workedMinutes: number
    dailyOvertimeMinutes: number
    weeklyOvertimeMinutes: number
  }[]
}
