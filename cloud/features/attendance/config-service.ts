import type {
  AssignmentInput,
  AssignmentView,
  HolidayInput,
  HolidayView,
  PolicyInput,
  PolicyView,
  ShiftInput,
  ShiftView,
} from '../../../shared/attendance.js'
import { isId, newId } from '../../../shared/ids.js'
import { formatServerTime } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type {
  AttendanceAssignmentsTable,
  AttendanceHolidaysTable,
  AttendancePoliciesTable,
  AttendanceShiftsTable,
} from '../../db/schema.js'
import { isUniqueViolation } from '../../db/unique-violation.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type { AttendanceConfigStore } from './config-store.js'
import { type PolicySettings, parseSettings, resolvePolicy, SHIFT_DEFAULTS } from './policy-resolution.js'
import { isCalendarDate } from './work-dates.js'

export interface ConfigStores {
  attendanceConfig: AttendanceConfigStore
  audit: AuditStore
}

function toShift(row: AttendanceShiftsTable): ShiftView {
  return {
    code: row.code,
    name: row.name,
    start: row.start_time,
    end: row.end_time,
    unpaidBreakMinutes: row.unpaid_break_minutes,
    earlyWindowMinutes: row.early_window_minutes,
    lateWindowMinutes: row.late_window_minutes,
    lateGraceMinutes: row.late_grace_minutes,
    earlyExitGraceMinutes: row.early_exit_grace_minutes,
    updatedAt: formatServerTime(row.updated_at),
  }
}

/** A shift's input as the columns that hold it, the shift defaults filling what it leaves out. */
function shiftColumns(input: ShiftInput) {
  return {
    name: input.name ?? null,
    start_time: input.start,
    end_time: input.end,
    unpaid_break_minutes: input.unpaidBreakMinutes ?? SHIFT_DEFAULTS.unpaidBreakMinutes,
    early_window_minutes: input.earlyWindowMinutes ?? SHIFT_DEFAULTS.earlyWindowMinutes,
    late_window_minutes: input.lateWindowMinutes ?? SHIFT_DEFAULTS.lateWindowMinutes,
    late_grace_minutes: input.lateGraceMinutes ?? SHIFT_DEFAULTS.lateGraceMinutes,
    early_exit_grace_minutes: input.earlyExitGraceMinutes ?? SHIFT_DEFAULTS.earlyExitGraceMinutes,
  }
}

function toAssignment(row: AttendanceAssignmentsTable): AssignmentView {
  return {
    id: row.id,
    employeeCode: row.employee_code === '' ? null : row.employee_code,
    group: row.group_name === '' ? null : row.group_name,
    shiftCode: row.shift_code,
    effectiveFrom: row.effective_from,
    effectiveTo: row.effective_to,
    updatedAt: formatServerTime(row.updated_at),
  }
}

function toHoliday(row: AttendanceHolidaysTable): HolidayView {
  return {
    id: row.id,
    date: row.holiday_date,
    name: row.name,
    group: row.group_name === '' ? null : row.group_name,
    updatedAt: formatServerTime(row.updated_at),
  }
}

function parseSettingsOf(row: AttendancePoliciesTable | undefined): PolicySettings | undefined {
  return row ? parseSettings(row.settings) : undefined
}

function bodyError(pointer: string, message: string): AppError {
  return new AppError('validation_failed', message, { errors: [{ in: 'body', pointer, message }] })
}

function checkDate(pointer: string, value: string | null | undefined): void {
  if (value != null && !isCalendarDate(value)) throw bodyError(pointer, `${value} is not a calendar date`)
}

/** Only the fields set, so that the stored settings say what this record overrides. */
function settingsOf(input: Omit<PolicyInput, 'group'>): PolicySettings {
  return Object.fromEntries(
    Object.entries(input).filter(([, v]) => v !== undefined && v !== null),
  ) as PolicySettings
}

/**
 * The attendance configuration of a tenant: shifts, policies (the tenant's and its groups'),
 * assignments of shifts to employees or groups, and holidays. Each change is audited. A change
 * applies to days computed after it: a day already computed changes when a punch, a correction or a
 * recompute recomputes it (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 */
export class AttendanceConfigService {
  constructor(
    private readonly deps: { stores: UnitOfWork<ConfigStores>; audit: AuditService; now: () => number },
  ) {}

  private async audited<T>(
    tenantId: string,
    actor: Actor,
    what: string,
    id: string,
    work: (s: ConfigStores) => Promise<T>,
  ): Promise<T> {
    return this.deps.stores.transaction(async (s) => {
      const result = await work(s)
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'attendance.config_changed',
        target: { type: what, id },
      })
      return result
    })
  }

  async listShifts(tenantId: string): Promise<{ data: ShiftView[] }> {
    return { data: (await this.deps.stores.read.attendanceConfig.listShifts(tenantId)).map(toShift) }
  }

  async getShift(tenantId: string, code: string): Promise<ShiftView> {
    const row = await this.deps.stores.read.attendanceConfig.getShift(tenantId, code)
    if (!row) throw new AppError('shift_not_found', `No shift ${code}.`)
    return toShift(row)
  }

  async createShift(tenantId: string, input: ShiftInput, actor: Actor): Promise<ShiftView> {
    const now = this.deps.now()
    const row: AttendanceShiftsTable = {
      tenant_id: tenantId,
      code: input.code,
      ...shiftColumns(input),
      created_at: now,
      updated_at: now,
    }
    try {
      await this.audited(tenantId, actor, 'shift', input.code, (s) => s.attendanceConfig.insertShift(row))
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('shift_exists', `A shift ${input.code} already exists.`)
      throw err
    }
    return toShift(row)
  }

  /** Replaces a shift's times and windows; its code stays. */
  async updateShift(tenantId: string, code: string, input: ShiftInput, actor: Actor): Promise<ShiftView> {
    if (input.code !== code) throw bodyError('#/code', 'a shift keeps its code: create a new shift instead')
    const existing = await this.deps.stores.read.attendanceConfig.getShift(tenantId, code)
    if (!existing) throw new AppError('shift_not_found', `No shift ${code}.`)
    const row: AttendanceShiftsTable = {
      ...existing,
      ...shiftColumns(input),
      updated_at: this.deps.now(),
    }
    await this.audited(tenantId, actor, 'shift', code, (s) => s.attendanceConfig.updateShift(row))
    return toShift(row)
  }

  async deleteShift(tenantId: string, code: string, actor: Actor): Promise<void> {
    await this.audited(tenantId, actor, 'shift', code, async (s) => {
      if ((await s.attendanceConfig.countAssignmentsOf(tenantId, code)) > 0)
        throw new AppError('shift_in_use', `Shift ${code} is assigned; delete its assignments first.`)
      if (!(await s.attendanceConfig.deleteShift(tenantId, code)))
        throw new AppError('shift_not_found', `No shift ${code}.`)
    })
  }

  private async policyView(tenantId: string, row: AttendancePoliciesTable): Promise<PolicyView> {
    const own = parseSettings(row.settings)
    let tenant: PolicySettings | undefined = own
    if (row.group_name !== '') {
      const base = (await this.deps.stores.read.attendanceConfig.policiesFor(tenantId, '')).find(
        (p) => p.group_name === '',
      )
      tenant = base ? parseSettings(base.settings) : undefined
    }
    const effective = resolvePolicy(tenant, row.group_name === '' ? undefined : own)
    return {
      id: row.id,
      group: row.group_name === '' ? null : row.group_name,
      settings: own,
      effective: effective as unknown as PolicyView['effective'],
      version: row.version,
      updatedAt: formatServerTime(row.updated_at),
    }
  }

  async listPolicies(tenantId: string): Promise<{ data: PolicyView[] }> {
    const rows = await this.deps.stores.read.attendanceConfig.listPolicies(tenantId)
    return { data: await Promise.all(rows.map((r) => this.policyView(tenantId, r))) }
  }

  async getPolicy(tenantId: string, id: string): Promise<PolicyView> {
    const row = isId('attendancePolicy', id)
      ? await this.deps.stores.read.attendanceConfig.getPolicy(tenantId, id)
      : undefined
    if (!row) throw new AppError('attendance_policy_not_found', `No attendance policy ${id}.`)
    return this.policyView(tenantId, row)
  }

  async createPolicy(tenantId: string, input: PolicyInput, actor: Actor): Promise<PolicyView> {
    const { group, ...fields } = input
    await this.checkConsistent(tenantId, group ?? '', settingsOf(fields))
    const now = this.deps.now()
    const row: AttendancePoliciesTable = {
      id: newId('attendancePolicy', Math.floor(now / 1000)),
      tenant_id: tenantId,
      group_name: group ?? '',
      settings: JSON.stringify(settingsOf(fields)),
      version: 1,
      created_at: now,
      updated_at: now,
    }
    try {
      await this.audited(tenantId, actor, 'attendance_policy', row.id, (s) =>
        s.attendanceConfig.insertPolicy(row),
      )
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError(
          'attendance_policy_exists',
          group == null
            ? 'The tenant already has its policy: change it instead.'
            : `Group ${group} already has a policy: change it instead.`,
        )
      throw err
    }
    return this.policyView(tenantId, row)
  }

  /** Replaces what a policy sets (its group stays); fields left out are inherited again. */
  async updatePolicy(tenantId: string, id: string, input: PolicyInput, actor: Actor): Promise<PolicyView> {
    const { group, ...fields } = input
    const existing = isId('attendancePolicy', id)
      ? await this.deps.stores.read.attendanceConfig.getPolicy(tenantId, id)
      : undefined
    if (!existing) throw new AppError('attendance_policy_not_found', `No attendance policy ${id}.`)
    if (group !== undefined && (group ?? '') !== existing.group_name)
      throw bodyError('#/group', 'a policy keeps its group: create one for the other group instead')
    await this.checkConsistent(tenantId, existing.group_name, settingsOf(fields))
    const settings = JSON.stringify(settingsOf(fields))
    const now = this.deps.now()
    await this.audited(tenantId, actor, 'attendance_policy', id, (s) =>
      s.attendanceConfig.updatePolicy(tenantId, id, settings, now),
    )
    return this.policyView(tenantId, {
      ...existing,
      settings,
      version: existing.version + 1,
      updated_at: now,
    })
  }

  /**
   * Refuses settings that would make a nonsense policy once inherited ones are applied: a half day
   * longer than a full day (the tenant's own policy is checked against its groups' as well).
   */
  private async checkConsistent(tenantId: string, group: string, settings: PolicySettings): Promise<void> {
    const rows = await this.deps.stores.read.attendanceConfig.listPolicies(tenantId)
    const tenant = group === '' ? settings : parseSettingsOf(rows.find((r) => r.group_name === ''))
    const groups =
      group === '' ? rows.filter((r) => r.group_name !== '').map((r) => parseSettingsOf(r)) : [settings]
    for (const g of groups.length > 0 ? groups : [undefined]) {
      const p = resolvePolicy(tenant, g)
      if (p.halfDayMinutes > p.fullDayMinutes)
        throw bodyError(
          '#/halfDayMinutes',
          `a half day (${p.halfDayMinutes} min) would be longer than a full day (${p.fullDayMinutes} min)`,
        )
    }
  }

  async deletePolicy(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.audited(tenantId, actor, 'attendance_policy', id, async (s) => {
      if (!isId('attendancePolicy', id) || !(await s.attendanceConfig.deletePolicy(tenantId, id)))
        throw new AppError('attendance_policy_not_found', `No attendance policy ${id}.`)
    })
  }

  async listAssignments(tenantId: string, employeeCode?: string): Promise<{ data: AssignmentView[] }> {
    return {
      data: (await this.deps.stores.read.attendanceConfig.listAssignments(tenantId, employeeCode)).map(
        toAssignment,
      ),
    }
  }

  async createAssignment(tenantId: string, input: AssignmentInput, actor: Actor): Promise<AssignmentView> {
    checkDate('#/effectiveFrom', input.effectiveFrom)
    checkDate('#/effectiveTo', input.effectiveTo)
    if (input.effectiveTo != null && input.effectiveTo < input.effectiveFrom)
      throw bodyError('#/effectiveTo', 'is before effectiveFrom')
    if (input.employeeCode != null && input.group != null)
      throw bodyError('#/group', 'give employeeCode or group, not both')
    const now = this.deps.now()
    const row: AttendanceAssignmentsTable = {
      id: newId('shiftAssignment', Math.floor(now / 1000)),
      tenant_id: tenantId,
      employee_code: input.employeeCode ?? '',
      group_name: input.group ?? '',
      shift_code: input.shiftCode,
      effective_from: input.effectiveFrom,
      effective_to: input.effectiveTo ?? null,
      created_at: now,
      updated_at: now,
    }
    await this.audited(tenantId, actor, 'shift_assignment', row.id, async (s) => {
      if (!(await s.attendanceConfig.getShift(tenantId, input.shiftCode)))
        throw new AppError('shift_not_found', `No shift ${input.shiftCode}.`)
      await s.attendanceConfig.insertAssignment(row)
    })
    return toAssignment(row)
  }

  async deleteAssignment(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.audited(tenantId, actor, 'shift_assignment', id, async (s) => {
      if (!isId('shiftAssignment', id) || !(await s.attendanceConfig.deleteAssignment(tenantId, id)))
        throw new AppError('shift_assignment_not_found', `No shift assignment ${id}.`)
    })
  }

  async listHolidays(tenantId: string): Promise<{ data: HolidayView[] }> {
    return { data: (await this.deps.stores.read.attendanceConfig.listHolidays(tenantId)).map(toHoliday) }
  }

  async createHoliday(tenantId: string, input: HolidayInput, actor: Actor): Promise<HolidayView> {
    checkDate('#/date', input.date)
    const now = this.deps.now()
    const row: AttendanceHolidaysTable = {
      id: newId('holiday', Math.floor(now / 1000)),
      tenant_id: tenantId,
      holiday_date: input.date,
      name: input.name,
      group_name: input.group ?? '',
      created_at: now,
      updated_at: now,
    }
    try {
      await this.audited(tenantId, actor, 'holiday', row.id, (s) => s.attendanceConfig.insertHoliday(row))
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('holiday_exists', `${input.date} is already a holiday for this group.`)
      throw err
    }
    return toHoliday(row)
  }

  async deleteHoliday(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.audited(tenantId, actor, 'holiday', id, async (s) => {
      if (!isId('holiday', id) || !(await s.attendanceConfig.deleteHoliday(tenantId, id)))
        throw new AppError('holiday_not_found', `No holiday ${id}.`)
    })
  }
}
