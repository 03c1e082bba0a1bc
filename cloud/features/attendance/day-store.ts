import { sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import { type LiveCredentialAt, liveCredential } from '../../db/live-credential.js'
import type { AttendanceDaysTable, AttendanceLocksTable } from '../../db/schema.js'

export type DayRow = AttendanceDaysTable

/** Where a page starts: after (employee_code, work_date, id) in a listing, or after (updated_at, id) in a sync. */
export type DayPosition = { employeeCode: string; workDate: string } | { updatedAt: number; id: string }

export interface DayListFilter {
  from?: string
  to?: string
  employeeCode?: string
  status?: string
  /** With `now`: the state a day is in, as derived from its stored times (see dayState). */
  state?: 'OPEN' | 'PROVISIONAL' | 'FINAL' | 'LOCKED'
  now: number
  updatedSince?: number
  after?: DayPosition
  limit: number
  /**
   * A cached caller the same statement checks: no rows unless its credential is still live
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  liveCredential?: LiveCredentialAt
}

/** The day records the engine computes, one per employee and work date. */
export class DayStore {
  constructor(private readonly db: Executor) {}

  forDates(tenantId: string, employeeCode: string, from: string, to: string): Promise<DayRow[]> {
    return this.db
      .selectFrom('attendance_days')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', employeeCode)
      .where('work_date', '>=', from)
      .where('work_date', '<=', to)
      .execute()
  }

  get(tenantId: string, employeeCode: string, workDate: string): Promise<DayRow | undefined> {
    return this.db
      .selectFrom('attendance_days')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', employeeCode)
      .where('work_date', '=', workDate)
      .executeTakeFirst()
  }

  async insert(row: DayRow): Promise<void> {
    await this.db.insertInto('attendance_days').values(row).execute()
  }

  /** Writes a new revision, only if the stored one is still `expectedRevision`: false when another writer won. */
  async replace(
    tenantId: string,
    id: string,
    expectedRevision: number,
    changes: Pick<
      DayRow,
      'status' | 'record' | 'revision' | 'scheduled_end' | 'final_at' | 'finalized_at' | 'updated_at'
    >,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('attendance_days')
      .set(changes)
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revision', '=', expectedRevision)
      .where('locked_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  async notePunchesAfterLock(tenantId: string, id: string, count: number, updatedAt: number): Promise<void> {
    await this.db
      .updateTable('attendance_days')
      .set({ punches_after_lock: count, updated_at: updatedAt })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  /** Days whose time for late punches has passed and that are not final yet, across tenants. */
  due(now: number, limit: number): Promise<DayRow[]> {
    return this.db
      .selectFrom('attendance_days')
      .selectAll()
      .where('finalized_at', 'is', null)
      .where('final_at', '<=', now)
      .orderBy('final_at')
      .limit(limit)
      .execute()
  }

  async markFinal(
    tenantId: string,
    id: string,
    revision: number,
    at: number,
    updatedAt: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('attendance_days')
      .set({ finalized_at: at, updated_at: updatedAt })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revision', '=', revision)
      .where('finalized_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  async countNotFinal(tenantId: string, from: string, to: string): Promise<number> {
    const row = await this.db
      .selectFrom('attendance_days')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('work_date', '>=', from)
      .where('work_date', '<=', to)
      .where('finalized_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** The ids of a range's days not locked yet. */
  async unlockedIds(tenantId: string, from: string, to: string): Promise<{ id: string }[]> {
    return this.db
      .selectFrom('attendance_days')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('work_date', '>=', from)
      .where('work_date', '<=', to)
      .where('locked_at', 'is', null)
      .orderBy('id')
      .execute()
  }

  async insertLock(row: AttendanceLocksTable): Promise<void> {
    await this.db
      .insertInto('attendance_locks')
      .values(row)
      .onConflict((oc) => oc.columns(['tenant_id', 'from_date', 'to_date']).doNothing())
      .execute()
  }

  /** The locked periods that overlap `from`..`to`. */
  lockedPeriods(
    tenantId: string,
    from: string,
    to: string,
  ): Promise<Pick<AttendanceLocksTable, 'from_date' | 'to_date'>[]> {
    return this.db
      .selectFrom('attendance_locks')
      .select(['from_date', 'to_date'])
      .where('tenant_id', '=', tenantId)
      .where('from_date', '<=', to)
      .where('to_date', '>=', from)
      .execute()
  }

  async markLocked(tenantId: string, id: string, at: number, updatedAt: number): Promise<void> {
    await this.db
      .updateTable('attendance_days')
      .set({ locked_at: at, updated_at: updatedAt })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  list(tenantId: string, filter: DayListFilter): Promise<DayRow[]> {
    let q = this.db.selectFrom('attendance_days').selectAll().where('tenant_id', '=', tenantId)
    const caller = filter.liveCredential
    if (caller) q = q.where(sql<boolean>`exists (${liveCredential(tenantId, caller)})`)
    if (filter.from !== undefined) q = q.where('work_date', '>=', filter.from)
    if (filter.to !== undefined) q = q.where('work_date', '<=', filter.to)
    if (filter.employeeCode !== undefined) q = q.where('employee_code', '=', filter.employeeCode)
    if (filter.status !== undefined) q = q.where('status', '=', filter.status)
    switch (filter.state) {
      case 'LOCKED':
        q = q.where('locked_at', 'is not', null)
        break
      case 'FINAL':
        q = q.where('locked_at', 'is', null).where('finalized_at', 'is not', null)
        break
      case 'PROVISIONAL':
        q = q.where('finalized_at', 'is', null).where('scheduled_end', '<=', filter.now)
        break
      case 'OPEN':
        q = q.where('finalized_at', 'is', null).where('scheduled_end', '>', filter.now)
        break
    }
    const after = filter.after
    if (filter.updatedSince !== undefined) {
      if (after && 'updatedAt' in after)
        q = q.where((eb) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(after.updatedAt, after.id)))
      else q = q.where('updated_at', '>=', filter.updatedSince)
      return q.orderBy('updated_at').orderBy('id').limit(filter.limit).execute()
    }
    if (after && 'employeeCode' in after)
      q = q.where((eb) =>
        eb(eb.refTuple('employee_code', 'work_date'), '>', eb.tuple(after.employeeCode, after.workDate)),
      )
    return q.orderBy('employee_code').orderBy('work_date').limit(filter.limit).execute()
  }
}
