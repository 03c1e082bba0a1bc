import type { Executor } from '../../db/executor.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { AttendanceDirtyTable, AttendanceJobsTable } from '../../db/schema.js'

/** Rows per INSERT: parameters stay well under SQLite's and PostgreSQL's limits. */
const CHUNK = 200

// The one day a single punch touches: built and compiled once (see prepareQuery).
const enqueueOne = prepareQuery(
  (db, tenantId: string, employeeCode: string, localDate: string, at: number) =>
    db
      .insertInto('attendance_dirty')
      .values({ tenant_id: tenantId, employee_code: employeeCode, local_date: localDate, queued_at: at })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'employee_code', 'local_date'])
          .doUpdateSet((eb) => ({ queued_at: eb.ref('excluded.queued_at') })),
      ),
  ['tenant_id', 'employee_code', 'local_date', -1],
)

/**
 * The work the attendance engine has to do: the (employee, local date) pairs new punches touched,
 * recompute jobs, and how far each tenant's days have been made for everyone.
 */
export class AttendanceWorkStore {
  constructor(private readonly db: Executor) {}

  /** Queues days to recompute; a day queued again keeps one row, with the later time. */
  async enqueue(
    tenantId: string,
    days: readonly { employeeCode: string; localDate: string }[],
    at: number,
  ): Promise<void> {
    const [only] = days
    if (days.length === 1 && only) {
      await enqueueOne(this.db, tenantId, only.employeeCode, only.localDate, at)
      return
    }
    for (let i = 0; i < days.length; i += CHUNK) {
      await this.db
        .insertInto('attendance_dirty')
        .values(
          days.slice(i, i + CHUNK).map((d) => ({
            tenant_id: tenantId,
            employee_code: d.employeeCode,
            local_date: d.localDate,
            queued_at: at,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'employee_code', 'local_date']).doUpdateSet({ queued_at: at }),
        )
        .execute()
    }
  }

  /** The oldest queued days due by `now`, across tenants. */
  queued(now: number, limit: number): Promise<AttendanceDirtyTable[]> {
    return this.db
      .selectFrom('attendance_dirty')
      .selectAll()
      .where('queued_at', '<=', now)
      .orderBy('queued_at')
      .limit(limit)
      .execute()
  }

  /** Puts a queued day off until `until`, unless a punch queued it again meanwhile. */
  async postpone(row: AttendanceDirtyTable, until: number): Promise<void> {
    await this.db
      .updateTable('attendance_dirty')
      .set({ queued_at: until })
      .where('tenant_id', '=', row.tenant_id)
      .where('employee_code', '=', row.employee_code)
      .where('local_date', '=', row.local_date)
      .where('queued_at', '=', row.queued_at)
      .execute()
  }

  /** Removes a queued day, unless a punch queued it again after `queuedAt` (then it stays, to be done again). */
  async done(row: AttendanceDirtyTable): Promise<void> {
    await this.db
      .deleteFrom('attendance_dirty')
      .where('tenant_id', '=', row.tenant_id)
      .where('employee_code', '=', row.employee_code)
      .where('local_date', '=', row.local_date)
      .where('queued_at', '<=', row.queued_at)
      .execute()
  }

  async countQueued(): Promise<number> {
    const row = await this.db
      .selectFrom('attendance_dirty')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  async insertJob(row: AttendanceJobsTable): Promise<void> {
    await this.db.insertInto('attendance_jobs').values(row).execute()
  }

  getJob(tenantId: string, id: string): Promise<AttendanceJobsTable | undefined> {
    return this.db
      .selectFrom('attendance_jobs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async countActiveJobs(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('attendance_jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['queued', 'running'])
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * Takes the oldest job that is queued, or running under a lease that has run out (its instance
   * died), leasing it until `until`. Returns it, or undefined when there is none or another took it.
   */
  async claimJob(now: number, until: number): Promise<AttendanceJobsTable | undefined> {
    const candidate = await this.db
      .selectFrom('attendance_jobs')
      .selectAll()
      .where('status', 'in', ['queued', 'running'])
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst()
    if (!candidate) return undefined
    const result = await this.db
      .updateTable('attendance_jobs')
      .set({ status: 'running', claimed_until: until })
      .where('id', '=', candidate.id)
      .where((eb) =>
        candidate.claimed_until === null
          ? eb('claimed_until', 'is', null)
          : eb('claimed_until', '=', candidate.claimed_until),
      )
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
      ? { ...candidate, status: 'running', claimed_until: until }
      : undefined
  }

  async updateJob(
    id: string,
    changes: Partial<
      Pick<
        AttendanceJobsTable,
        | 'status'
        | 'employees'
        | 'employees_done'
        | 'last_employee_code'
        | 'days_changed'
        | 'claimed_until'
        | 'error'
        | 'finished_at'
      >
    >,
  ): Promise<void> {
    await this.db.updateTable('attendance_jobs').set(changes).where('id', '=', id).execute()
  }

  madeThrough(tenantId: string): Promise<string | undefined> {
    return this.db
      .selectFrom('attendance_calendar')
      .select('made_through')
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst()
      .then((r) => r?.made_through)
  }

  async setMadeThrough(tenantId: string, date: string): Promise<void> {
    await this.db
      .insertInto('attendance_calendar')
      .values({ tenant_id: tenantId, made_through: date })
      .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ made_through: date }))
      .execute()
  }
}
