import type {
  AttendanceAssignmentsTable,
  AttendanceHolidaysTable,
  AttendancePoliciesTable,
  AttendanceShiftsTable,
} from '../../db/schema.js'
import type { Policy, Shift } from './engine/types.js'
import { parseSettings, resolvePolicy, toEngineShift } from './policy-resolution.js'

/**
 * A tenant's attendance configuration, read once and used for many employees: a tenant has a few
 * shifts, policies and holidays, and its assignments are few beside its employees. A recompute of a
 * whole tenant reads it once a chunk rather than four times an employee.
 */
export interface TenantConfig {
  policies: AttendancePoliciesTable[]
  shifts: AttendanceShiftsTable[]
  assignments: AttendanceAssignmentsTable[]
  holidays: AttendanceHolidaysTable[]
}

/** What one employee's days are computed from, besides the punches. */
export interface EmployeeInputs {
  shiftFor: (date: string) => Shift | null
  isHoliday: (date: string) => boolean
  policy: Policy
}

/** An assignment's precedence: the employee's own, then its group's, then the tenant's. */
const rank = (a: AttendanceAssignmentsTable) => (a.employee_code !== '' ? 0 : a.group_name !== '' ? 1 : 2)

/** The inputs of one employee of group `group` (its department; '' for none). */
export function employeeInputs(config: TenantConfig, employeeCode: string, group: string): EmployeeInputs {
  const inGroup = (g: string) => g === '' || g === group
  const settingsOf = (g: string) => {
    const row = config.policies.find((p) => p.group_name === g)
    return row ? parseSettings(row.settings) : undefined
  }
  const policy = resolvePolicy(settingsOf(''), group === '' ? undefined : settingsOf(group))
  const shiftByCode = new Map(config.shifts.map((s) => [s.code, toEngineShift(s)]))
  // Among assignments of one kind, the one that started last wins.
  const ordered = config.assignments
    .filter((a) => a.employee_code === employeeCode || (a.employee_code === '' && inGroup(a.group_name)))
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        (a.effective_from < b.effective_from ? 1 : a.effective_from > b.effective_from ? -1 : 0) ||
        (a.id < b.id ? 1 : -1),
    )
  const holidays = new Set(config.holidays.filter((h) => inGroup(h.group_name)).map((h) => h.holiday_date))
  return {
    policy,
    isHoliday: (date) => holidays.has(date),
    shiftFor: (date) => {
      const found = ordered.find(
        (a) => a.effective_from <= date && (a.effective_to === null || date <= a.effective_to),
      )
      return found ? (shiftByCode.get(found.shift_code) ?? null) : null
    },
  }
}
