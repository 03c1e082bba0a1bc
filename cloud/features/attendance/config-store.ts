import type { Executor } from '../../db/executor.js'
import type {
  AttendanceAssignmentsTable,
  AttendanceHolidaysTable,
  AttendancePoliciesTable,
  AttendanceShiftsTable,
} from '../../db/schema.js'

/**
 * The attendance configuration of each tenant: shifts, policies, assignments and holidays. A row
 * for the whole tenant has group_name '' (and an assignment for a group or the tenant has
 * employee_code ''), so that unique indexes and lookups treat "no group" as a value.
 */
export class AttendanceConfigStore {
  constructor(private readonly db: Executor) {}

  listShifts(tenantId: string): Promise<AttendanceShiftsTable[]> {
    return this.db
      .selectFrom('attendance_shifts')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('code')
      .execute()
  }

  getShift(tenantId: string, code: string): Promise<AttendanceShiftsTable | undefined> {
    return this.db
      .selectFrom('attendance_shifts')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('code', '=', code)
      .executeTakeFirst()
  }

  async insertShift(row: AttendanceShiftsTable): Promise<void> {
    await this.db.insertInto('attendance_shifts').values(row).execute()
  }

  async updateShift(row: AttendanceShiftsTable): Promise<void> {
    const { tenant_id, code, created_at: _created, ...changes } = row
    await this.db
      .updateTable('attendance_shifts')
      .set(changes)
      .where('tenant_id', '=', tenant_id)
      .where('code', '=', code)
      .execute()
  }

  async deleteShift(tenantId: string, code: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('attendance_shifts')
      .where('tenant_id', '=', tenantId)
      .where('code', '=', code)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  async countAssignmentsOf(tenantId: string, shiftCode: string): Promise<number> {
    const row = await this.db
      .selectFrom('attendance_assignments')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('shift_code', '=', shiftCode)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  listPolicies(tenantId: string): Promise<AttendancePoliciesTable[]> {
    return this.db
      .selectFrom('attendance_policies')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('group_name')
      .execute()
  }

  getPolicy(tenantId: string, id: string): Promise<AttendancePoliciesTable | undefined> {
    return this.db
      .selectFrom('attendance_policies')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** The tenant's own policy and, if given, the group's: the two a day's policy is resolved from. */
  policiesFor(tenantId: string, group: string): Promise<AttendancePoliciesTable[]> {
    return this.db
      .selectFrom('attendance_policies')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('group_name', 'in', group === '' ? [''] : ['', group])
      .execute()
  }

  async insertPolicy(row: AttendancePoliciesTable): Promise<void> {
    await this.db.insertInto('attendance_policies').values(row).execute()
  }

  async updatePolicy(tenantId: string, id: string, settings: string, updatedAt: number): Promise<void> {
    await this.db
      .updateTable('attendance_policies')
      .set((eb) => ({ settings, updated_at: updatedAt, version: eb('version', '+', 1) }))
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  async deletePolicy(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('attendance_policies')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  listAssignments(tenantId: string, employeeCode?: string): Promise<AttendanceAssignmentsTable[]> {
    let q = this.db.selectFrom('attendance_assignments').selectAll().where('tenant_id', '=', tenantId)
    if (employeeCode !== undefined) q = q.where('employee_code', '=', employeeCode)
    return q.orderBy('employee_code').orderBy('group_name').orderBy('effective_from').orderBy('id').execute()
  }

  async insertAssignment(row: AttendanceAssignmentsTable): Promise<void> {
    await this.db.insertInto('attendance_assignments').values(row).execute()
  }

  getAssignment(tenantId: string, id: string): Promise<AttendanceAssignmentsTable | undefined> {
    return this.db
      .selectFrom('attendance_assignments')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async deleteAssignment(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('attendance_assignments')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  listHolidays(tenantId: string, range?: { from: string; to: string }): Promise<AttendanceHolidaysTable[]> {
    let q = this.db.selectFrom('attendance_holidays').selectAll().where('tenant_id', '=', tenantId)
    if (range) q = q.where('holiday_date', '>=', range.from).where('holiday_date', '<=', range.to)
    return q.orderBy('holiday_date').orderBy('group_name').execute()
  }

  getHoliday(tenantId: string, id: string): Promise<AttendanceHolidaysTable | undefined> {
    return this.db
      .selectFrom('attendance_holidays')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async insertHoliday(row: AttendanceHolidaysTable): Promise<void> {
    await this.db.insertInto('attendance_holidays').values(row).execute()
  }

  async deleteHoliday(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('attendance_holidays')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }
}
