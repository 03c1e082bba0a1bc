import { newId } from '../../../shared/ids.js'
import { isUniqueViolation } from '../../db/unique-violation.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { EmployeeStore } from '../employees/store.js'
import type { PunchStore } from '../punches/store.js'
import type { TenantStore } from '../tenants/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import type { OutboxStore } from '../webhooks/outbox-store.js'
import type { AttendanceConfigStore } from './config-store.js'
import type { CorrectionStore } from './correction-store.js'
import type { DayRow, DayStore } from './day-store.js'
import { changedFields, readRecord, toAttendanceDay, visibleChanges } from './day-view.js'
import { computeDays } from './engine/compute-days.js'
import type { ComputedDay } from './engine/types.js'
import { type EmployeeInputs, employeeInputs, type TenantConfig } from './tenant-config.js'
import { addDays, datesFrom, startOfDate } from './work-dates.js'

/** The stores a recompute uses. */
export interface RecomputeStores {
  tenants: Pick<TenantStore, 'reserveChangeTimes'>
  employees: Pick<EmployeeStore, 'findByCodes'>
  punches: Pick<PunchStore, 'forEmployee'>
  attendanceConfig: Pick<
    AttendanceConfigStore,
    'listPolicies' | 'listAssignments' | 'listShifts' | 'listHolidays'
  >
  corrections: Pick<CorrectionStore, 'voided'>
  days: Pick<DayStore, 'forDates' | 'insert' | 'replace' | 'notePunchesAfterLock' | 'lockedPeriods'>
  outbox: OutboxStore
}

export interface TenantZone {
  id: string
  timeZone: string
}

export interface RecomputeResult {
  /** Days written with a new revision (or created). */
  changed: number
  /** Another writer changed one of the days first: the caller must try again. */
  conflict: boolean
}

const MINUTE = 60_000_000

/**
 * Recomputes an employee's days over a range of work dates from the raw punch log, and writes
 * those that changed, each with a new revision (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 * A day is a pure function of its inputs, so recomputing an unchanged day writes nothing. The
 * webhook events go out in the same transaction as the day (the outbox):
 * - `attendance.day.finalized` once, when a day first becomes final;
 * - `attendance.day.updated` for every revision after that.
 * A locked day is never changed: a punch that lands on it is counted on it, and kept in the log.
 */
export class DayRecomputer {
  constructor(
    private readonly deps: {
      stores: UnitOfWork<RecomputeStores>
      outbox: WebhookOutbox
      now: () => number
    },
  ) {}

  /** The tenant's configuration, to pass to many recomputes in a row. */
  async loadConfig(tenantId: string): Promise<TenantConfig> {
    const config = this.deps.stores.read.attendanceConfig
    const [policies, shifts, assignments, holidays] = await Promise.all([
      config.listPolicies(tenantId),
      config.listShifts(tenantId),
      config.listAssignments(tenantId),
      config.listHolidays(tenantId),
    ])
    return { policies, shifts, assignments, holidays }
  }

  /**
   * Recomputes `employeeCode`'s days from `from` to `to`. `config` is the tenant's, read by
   * `loadConfig` (read here when not given). The days stored are read, and compared, outside any
   * transaction: an unchanged day costs no write, and a writer that changed one meanwhile is caught
   * by the revision check (or the unique key) and reported as a conflict.
   */
  async recompute(
    tenant: TenantZone,
    employeeCode: string,
    from: string,
    to: string,
    config?: TenantConfig,
  ): Promise<RecomputeResult> {
    const { stores, outbox } = this.deps
    const [employee] = await stores.read.employees.findByCodes(tenant.id, [employeeCode])
    if (!employee) return { changed: 0, conflict: false }
    const active = employee.status === 'ACTIVE'
    const inputs = employeeInputs(
      config ?? (await this.loadConfig(tenant.id)),
      employeeCode,
      employee.department ?? '',
    )
    // Two days either side: a night shift's OUT lands on the next date, and an early window can
    // reach back into the previous one.
    const punchRows = await stores.read.punches.forEmployee(
      tenant.id,
      employeeCode,
      startOfDate(addDays(from, -2), tenant.timeZone),
      startOfDate(addDays(to, 3), tenant.timeZone),
    )
    const voided = await stores.read.corrections.voided(
      tenant.id,
      punchRows.map((p) => p.id),
    )
    const dates = datesFrom(from, to)
    const computed = computeDays({
      employeeCode,
      timeZone: tenant.timeZone,
      dates,
      ...inputs,
      punches: punchRows
        .filter((p) => !voided.has(p.id))
        .map((p) => ({ id: p.id, punchType: p.punch_type as 'IN' | 'OUT', punchedAt: p.punched_at })),
    })
    const now = this.deps.now()
    const [stored, locked] = await Promise.all([
      stores.read.days.forDates(tenant.id, employeeCode, from, to),
      stores.read.days.lockedPeriods(tenant.id, from, to),
    ])
    const existing = new Map(stored.map((r) => [r.work_date, r]))
    const inLockedPeriod = (date: string) => locked.some((l) => l.from_date <= date && date <= l.to_date)
    const writes: { day: ComputedDay; row: DayRow | undefined; lateForLock: number }[] = []
    const lockedNotes: { row: DayRow; count: number }[] = []
    for (const day of computed) {
      const row = existing.get(day.workDate)
      if (row?.locked_at != null) {
        const kept = new Set(readRecord(row).punches.map((p) => p.id))
        const after = day.punches.filter((p) => !kept.has(p.id)).length
        if (after !== row.punches_after_lock) lockedNotes.push({ row, count: after })
        continue
      }
      if (!row && inLockedPeriod(day.workDate)) {
        // First made inside a period payroll has closed: made locked, as payroll saw it (no
        // punches), with the punches that came after counted on it.
        if (day.punches.length > 0)
          writes.push({
            day: { ...withoutPunches(day, inputs, tenant.timeZone) },
            row,
            lateForLock: day.punches.length,
          })
        continue
      }
      // A former employee gets days only where the log has punches of theirs.
      if (!row && !active && day.punches.length === 0) continue
      if (!row || changedFields(readRecord(row), day).length > 0) writes.push({ day, row, lateForLock: 0 })
    }
    if (writes.length + lockedNotes.length === 0) return { changed: 0, conflict: false }
    const result = await stores
      .transaction(async (s) => {
        let changeAt = await s.tenants.reserveChangeTimes(tenant.id, writes.length + lockedNotes.length, now)
        const events: Parameters<WebhookOutbox['emit']>[2][number][] = []
        for (const { day, row, lateForLock } of writes) {
          const updatedAt = changeAt++
          const record = JSON.stringify(day)
          const finalAt = day.captureEnd + inputs.policy.finalizeAfterMinutes * MINUTE
          const scheduledEnd = day.scheduledEnd ?? day.captureEnd
          const finalizedAt = row?.finalized_at ?? (finalAt <= now || lateForLock > 0 ? now : null)
          const next: DayRow = {
            id: row?.id ?? newId('attendanceDay', Math.floor(now / 1000)),
            tenant_id: tenant.id,
            employee_code: employeeCode,
            work_date: day.workDate,
            status: day.status,
            record,
            revision: (row?.revision ?? 0) + 1,
            scheduled_end: scheduledEnd,
            final_at: finalAt,
            finalized_at: finalizedAt,
            locked_at: lateForLock > 0 ? now : null,
            punches_after_lock: lateForLock,
            created_at: row?.created_at ?? now,
            updated_at: updatedAt,
          }
          if (row) {
            const ok = await s.days.replace(tenant.id, row.id, row.revision, {
              status: next.status,
              record,
              revision: next.revision,
              scheduled_end: scheduledEnd,
              final_at: finalAt,
              finalized_at: finalizedAt,
              updated_at: updatedAt,
            })
            if (!ok) throw new RecomputeConflict()
          } else await s.days.insert(next)
          const view = toAttendanceDay(next, tenant.timeZone, now, day)
          if (row?.finalized_at != null) {
            events.push({
              type: 'attendance.day.updated',
              data: {
                day: view,
                previousRevision: row.revision,
                changed: visibleChanges(changedFields(readRecord(row), day)),
              },
            })
          } else if (finalizedAt !== null && lateForLock === 0)
            events.push({ type: 'attendance.day.finalized', data: view })
        }
        for (const { row, count } of lockedNotes)
          await s.days.notePunchesAfterLock(tenant.id, row.id, count, changeAt++)
        await outbox.emit(s.outbox, tenant.id, events)
        return { changed: writes.length, conflict: false }
      })
      .catch((err: unknown) => {
        if (err instanceof RecomputeConflict || isUniqueViolation(err)) return { changed: 0, conflict: true }
        throw err
      })
    if (result.changed > 0) outbox.committed()
    return result
  }
}

/** A day as it was before any punch of it arrived: what payroll saw of a day it never had. */
function withoutPunches(day: ComputedDay, inputs: EmployeeInputs, timeZone: string): ComputedDay {
  const [empty] = computeDays({
    employeeCode: day.employeeCode,
    timeZone,
    dates: [day.workDate],
    ...inputs,
    punches: [],
  })
  if (!empty) throw new Error('computeDays returned no day')
  return empty
}

class RecomputeConflict extends Error {
  constructor() {
    super('a day was changed by another writer during the recompute')
  }
}
