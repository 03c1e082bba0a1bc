import type { Kysely } from 'kysely'

// The daily-attendance engine (docs/decisions/0085-attendance-days-are-a-pure-function.md):
// its configuration (shifts, policies, assignments, holidays), the day records it computes from
// the raw punch log, the corrections that sit beside that log (which is never edited), the queue
// of days a new punch touched, recompute jobs, and how far each tenant's days have been made.
//
// A group is an employee's department. Where a row applies to the whole tenant its group_name is
// '' rather than null, so that a unique index covers it on both databases.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('attendance_shifts')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('start_time', 'text', (c) => c.notNull())
    .addColumn('end_time', 'text', (c) => c.notNull())
    .addColumn('unpaid_break_minutes', 'integer', (c) => c.notNull())
    .addColumn('early_window_minutes', 'integer', (c) => c.notNull())
    .addColumn('late_window_minutes', 'integer', (c) => c.notNull())
    .addColumn('late_grace_minutes', 'integer', (c) => c.notNull())
    .addColumn('early_exit_grace_minutes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('attendance_shifts_pk', ['tenant_id', 'code'])
    .execute()

  await db.schema
    .createTable('attendance_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('group_name', 'text', (c) => c.notNull())
    /** The fields set on this record, as JSON; the rest is inherited. */
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('attendance_policies_group')
    .on('attendance_policies')
    .columns(['tenant_id', 'group_name'])
    .unique()
    .execute()

  await db.schema
    .createTable('attendance_assignments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('employee_code', 'text', (c) => c.notNull())
    .addColumn('group_name', 'text', (c) => c.notNull())
    .addColumn('shift_code', 'text', (c) => c.notNull())
    .addColumn('effective_from', 'text', (c) => c.notNull())
    .addColumn('effective_to', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('attendance_assignments_target')
    .on('attendance_assignments')
    .columns(['tenant_id', 'employee_code', 'group_name', 'effective_from'])
    .execute()

  await db.schema
    .createTable('attendance_holidays')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('holiday_date', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('group_name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('attendance_holidays_date')
    .on('attendance_holidays')
    .columns(['tenant_id', 'holiday_date', 'group_name'])
    .unique()
    .execute()

  await db.schema
    .createTable('attendance_days')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('employee_code', 'text', (c) => c.notNull())
    .addColumn('work_date', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    /** The computed record (figures, flags, punches, pairs, explanation) as JSON. */
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    /** When the shift ends (or the day, unscheduled): OPEN before, PROVISIONAL after. */
    .addColumn('scheduled_end', 'bigint', (c) => c.notNull())
    /** When the day becomes FINAL unless a late punch is still coming. */
    .addColumn('final_at', 'bigint', (c) => c.notNull())
    .addColumn('finalized_at', 'bigint')
    .addColumn('locked_at', 'bigint')
    /** Punches that arrived for the day after it was locked: kept in the log, never applied. */
    .addColumn('punches_after_lock', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('attendance_days_employee_date')
    .on('attendance_days')
    .columns(['tenant_id', 'employee_code', 'work_date'])
    .unique()
    .execute()
  await db.schema
    .createIndex('attendance_days_date')
    .on('attendance_days')
    .columns(['tenant_id', 'work_date', 'employee_code'])
    .execute()
  await db.schema
    .createIndex('attendance_days_updated')
    .on('attendance_days')
    .columns(['tenant_id', 'updated_at', 'id'])
    .execute()
  await db.schema
    .createIndex('attendance_days_due')
    .on('attendance_days')
    .columns(['finalized_at', 'final_at'])
    .execute()

  // The days new punches touched, by the punch's local date: recomputed off the request path.
  await db.schema
    .createTable('attendance_dirty')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('employee_code', 'text', (c) => c.notNull())
    .addColumn('local_date', 'text', (c) => c.notNull())
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('attendance_dirty_pk', ['tenant_id', 'employee_code', 'local_date'])
    .execute()
  await db.schema.createIndex('attendance_dirty_queued').on('attendance_dirty').column('queued_at').execute()

  // Corrections beside the raw log: a manual punch's reason and actor, or a punch voided.
  await db.schema
    .createTable('punch_corrections')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('punch_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('punch_corrections_pk', ['tenant_id', 'punch_id', 'kind'])
    .execute()

  await db.schema
    .createTable('attendance_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('from_date', 'text', (c) => c.notNull())
    .addColumn('to_date', 'text', (c) => c.notNull())
    /** JSON array of employee codes, or null for every employee. */
    .addColumn('employee_codes', 'text')
    .addColumn('employees', 'integer', (c) => c.notNull())
    .addColumn('employees_done', 'integer', (c) => c.notNull())
    /** The last employee code done: the job resumes after it. */
    .addColumn('last_employee_code', 'text')
    .addColumn('days_changed', 'integer', (c) => c.notNull())
    /** An instance working on it until then (a lease: a dead instance's job is taken over). */
    .addColumn('claimed_until', 'bigint')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute()
  await db.schema
    .createIndex('attendance_jobs_status')
    .on('attendance_jobs')
    .columns(['status', 'created_at'])
    .execute()
  await db.schema
    .createIndex('attendance_jobs_tenant')
    .on('attendance_jobs')
    .columns(['tenant_id', 'id'])
    .execute()

  // Periods payroll has closed: their days never change, and a day first made inside one is made
  // locked, as payroll saw it (nothing), with its late punches counted.
  await db.schema
    .createTable('attendance_locks')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('from_date', 'text', (c) => c.notNull())
    .addColumn('to_date', 'text', (c) => c.notNull())
    .addColumn('locked_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('attendance_locks_pk', ['tenant_id', 'from_date', 'to_date'])
    .execute()

  // How far every active employee's days have been made, per tenant: absences need a row too.
  await db.schema
    .createTable('attendance_calendar')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id'))
    .addColumn('made_through', 'text', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'attendance_calendar',
    'attendance_locks',
    'attendance_jobs',
    'punch_corrections',
    'attendance_dirty',
    'attendance_days',
    'attendance_holidays',
    'attendance_assignments',
    'attendance_policies',
    'attendance_shifts',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
