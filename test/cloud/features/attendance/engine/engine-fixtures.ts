import { computeDays } from '../../../../../cloud/features/attendance/engine/compute-days.js'
import { defaultPolicy } from '../../../../../cloud/features/attendance/engine/policy-defaults.js'
import type {
  ComputedDay,
  EnginePunch,
  Policy,
  Shift,
} from '../../../../../cloud/features/attendance/engine/types.js'

export const MINUTE = 60_000_000
export const HOUR = 60 * MINUTE
export const KOLKATA = 'Asia/Kolkata'

/**
 * µs of a wall time `YYYY-MM-DD HH:MM` in Asia/Kolkata (+05:30 all year), computed without the
 * code under test.
 */
export function ist(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text)
  if (!m) throw new Error(`bad fixture time ${text}`)
  const utc = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4]),
    Number(m[5]),
    Number(m[6] ?? 0),
  )
  return (utc - 330 * 60_000) * 1000
}

/** A general shift, 08:00–17:00, with hour-long windows, no break and no grace, changed by `over`. */
export function shift(over: Partial<Shift> = {}): Shift {
  return {
    code: 'GEN',
    start: '08:00',
    end: '17:00',
    unpaidBreakMinutes: 0,
    earlyWindowMinutes: 60,
    lateWindowMinutes: 60,
    lateGraceMinutes: 0,
    earlyExitGraceMinutes: 0,
    ...over,
  }
}

export function policy(over: Partial<Policy> = {}): Policy {
  return { ...defaultPolicy(), ...over }
}

let nextId = 0
/** A punch at a Kolkata wall time; ids are unique unless given. */
export function punch(punchType: 'IN' | 'OUT', text: string, id?: string): EnginePunch {
  nextId += 1
  return { id: id ?? `p${String(nextId).padStart(4, '0')}`, punchType, punchedAt: ist(text) }
}

export interface DaysOptions {
  /** The shift on each date; a function, or one shift for every date, or null for none. */
  shiftFor?: ((date: string) => Shift | null) | Shift | null
  policy?: Policy
  timeZone?: string
  holidays?: string[]
}

/** Computes `dates` for employee E1. */
export function days(dates: string[], punches: EnginePunch[], options: DaysOptions = {}): ComputedDay[] {
  const s = options.shiftFor === undefined ? shift() : options.shiftFor
  return computeDays({
    employeeCode: 'E1',
    timeZone: options.timeZone ?? KOLKATA,
    dates,
    shiftFor: typeof s === 'function' ? s : () => s,
    isHoliday: (date) => options.holidays?.includes(date) ?? false,
    policy: options.policy ?? policy(),
    punches,
  })
}

/** Computes one date. */
export function day(date: string, punches: EnginePunch[], options: DaysOptions = {}): ComputedDay {
  return days([date], punches, options)[0]!
}

/** The ids of a day's punches with the given role. */
export function idsWithRole(d: ComputedDay, role: string): string[] {
  return d.punches.filter((p) => p.role === role).map((p) => p.id)
}
