import type { Logger } from 'pino'
import type { AttendanceDirtyTable } from '../../db/schema.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { EmployeeStore } from '../employees/store.js'
import type { TenantStore } from '../tenants/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import type { OutboxStore } from '../webhooks/outbox-store.js'
import type { AttendanceQueue } from './attendance-queue.js'
import type { AttendanceWorkStore } from './attendance-work-store.js'
import type { DayRecomputer, TenantZone } from './day-recomputer.js'
import type { DayStore } from './day-store.js'
import { readRecord, toAttendanceDay } from './day-view.js'
import type { TenantConfig } from './tenant-config.js'
import { addDays, daysBetween, localDate } from './work-dates.js'

/** The stores the worker uses besides the recomputer's. */
export interface WorkerStores {
  tenants: Pick<TenantStore, 'get' | 'listZones' | 'reserveChangeTimes'>
  employees: Pick<EmployeeStore, 'codesAfter'>
  attendanceWork: Pick<
    AttendanceWorkStore,
    'queued' | 'done' | 'postpone' | 'claimJob' | 'updateJob' | 'madeThrough' | 'setMadeThrough'
  >
  days: Pick<DayStore, 'due' | 'markFinal'>
  outbox: OutboxStore
}

/** Queued days taken per round. */
const QUEUE_BATCH = 200
/** Employees of the queue recomputed at once, by database: PostgreSQL's pool carries several. */
export const QUEUE_CONCURRENCY = { sqlite: 1, postgres: 4 } as const
/** Days finalized per round. */
const FINALIZE_BATCH = 200
/** Employees a job recomputes between two saves of its progress. */
const JOB_CHUNK = 25
/** A job's lease: another instance takes it over if this one dies. */
const JOB_LEASE_US = 120_000_000
/** How often, at most, every tenant's calendar is checked for dates to make days for. */
const CALENDAR_EVERY_US = 60_000_000
const IDLE_POLL_MS = 1_000
/** A queued day whose recompute failed is tried again this much later. */
const RETRY_AFTER_US = 60_000_000
/** Tries of one employee's recompute, each lost to another writer, before a job fails. */
const MAX_CONFLICTS = 5
/** A new tenant's days are made from this many days back: not its whole history (a recompute does that). */
const FIRST_CALENDAR_DAYS = 1

/**
 * Lets waiting requests run between two employees' recomputes: on SQLite the worker shares the
 * one connection (and its group commit) with ingestion, which must not wait for a whole chunk.
 */
function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * The attendance engine's background work, in this order each round:
 * 1. recompute the days new punches touched (the queue the ingest writes in its transaction);
 * 2. finalize the days whose time for late punches has passed, sending `attendance.day.finalized`;
 * 3. make every active employee's day for each new date, so an absence is a day too;
 * 4. advance recompute jobs a chunk at a time, saving progress, so ingestion never waits long.
 * Every step is idempotent: two instances doing the same step compute the same days, and a
 * revision check makes one of them retry (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 */
export class AttendanceWorker {
  private running = false
  private loop: Promise<void> | undefined
  private waker: (() => void) | undefined
  private woken = false
  private lastCalendarCheck = Number.NEGATIVE_INFINITY
  private readonly zones = new Map<string, string>()

  constructor(
    private readonly deps: {
      stores: UnitOfWork<WorkerStores>
      recomputer: DayRecomputer
      queue: AttendanceQueue
      outbox: WebhookOutbox
      log: Pick<Logger, 'info' | 'warn' | 'error'>
      now: () => number
      /** Employees of the queue recomputed at once (1 when not given; see QUEUE_CONCURRENCY). */
      queueConcurrency?: number
    },
  ) {
    deps.queue.onWake(() => this.wake())
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.running = false
    this.wake()
    await this.loop
  }

  wake(): void {
    this.woken = true
    this.waker?.()
  }

  /**
   * One full round: returns whether there may be more to do. Each step runs even when another
   * failed, so one tenant's fault never stops every tenant's days.
   */
  async round(): Promise<boolean> {
    const step = async <T>(name: string, work: () => Promise<T>, failed: T): Promise<T> => {
      try {
        return await work()
      } catch (err) {
        this.deps.log.error({ err, step: name }, 'attendance step failed')
        return failed
      }
    }
    let busy = (await step('queue', () => this.drainQueue(), 0)) >= QUEUE_BATCH
    busy = (await step('finalize', () => this.finalizeDue(), 0)) >= FINALIZE_BATCH || busy
    await step('calendar', () => this.makeCalendars(), undefined)
    busy = (await step('jobs', () => this.advanceJob(), false)) || busy
    return busy
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false
      const busy = await this.round()
      if (!busy && !this.woken && this.running) await this.idle()
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, IDLE_POLL_MS)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.waker = () => {
        this.waker = undefined
        done()
      }
    })
  }

  private async zoneOf(tenantId: string): Promise<TenantZone | undefined> {
    let timeZone = this.zones.get(tenantId)
    if (timeZone === undefined) {
      timeZone = (await this.deps.stores.read.tenants.get(tenantId))?.time_zone
      if (timeZone === undefined) return undefined
      this.zones.set(tenantId, timeZone)
    }
    return { id: tenantId, timeZone }
  }

  /**
   * Recomputes the queued days: each punch's local date and the dates either side, where a shift may
   * hold it. Employees are done `queueConcurrency` at a time: on PostgreSQL a recompute is a few round
   * trips, and a pool of connections can carry several; SQLite has one connection, so one.
   */
  async drainQueue(): Promise<number> {
    const queued = await this.deps.stores.read.attendanceWork.queued(this.deps.now(), QUEUE_BATCH)
    const configs = new Map<string, Promise<TenantConfig>>()
    const byEmployee = new Map<string, typeof queued>()
    for (const row of queued) {
      const key = `${row.tenant_id}|${row.employee_code}`
      byEmployee.set(key, [...(byEmployee.get(key) ?? []), row])
    }
    const groups = [...byEmployee.values()]
    let next = 0
    const lane = async () => {
      for (let rows = groups[next++]; rows !== undefined; rows = groups[next++]) {
        await this.recomputeQueued(rows, configs)
        await yieldToRequests()
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.deps.queueConcurrency ?? 1, groups.length) }, lane))
    return queued.length
  }

  /** One employee's queued days; a failure puts them off rather than dropping them. */
  private async recomputeQueued(
    rows: AttendanceDirtyTable[],
    configs: Map<string, Promise<TenantConfig>>,
  ): Promise<void> {
    const { stores, recomputer } = this.deps
    const first = rows[0]
    if (!first) return
    try {
      const tenant = await this.zoneOf(first.tenant_id)
      if (!tenant) return
      const dates = rows.map((r) => r.local_date).sort()
      const from = addDays(dates[0] as string, -1)
      const to = addDays(dates.at(-1) as string, 1)
      // Dates far apart are done apart: one recompute spans the dates between.
      const spans =
        daysBetween(from, to) > 10
          ? dates.map((d) => [addDays(d, -1), addDays(d, 1)] as const)
          : [[from, to] as const]
      let config = configs.get(tenant.id)
      if (!config) {
        config = recomputer.loadConfig(tenant.id)
        configs.set(tenant.id, config)
      }
      let conflict = false
      for (const [a, b] of spans) {
        const result = await recomputer.recompute(tenant, first.employee_code, a, b, await config)
        conflict ||= result.conflict
      }
      // On a conflict another writer changed a day first: the rows stay queued for the next round.
      if (!conflict) for (const row of rows) await stores.read.attendanceWork.done(row)
    } catch (err) {
      // Put off, not dropped: the days are tried again later, and the rest of the queue goes on.
      this.deps.log.error(
        { err, tenantId: first.tenant_id, employeeCode: first.employee_code },
        'recompute failed',
      )
      for (const row of rows) await stores.read.attendanceWork.postpone(row, this.deps.now() + RETRY_AFTER_US)
    }
  }

  /** Marks due days final, each with its `attendance.day.finalized` event in the same transaction. */
  async finalizeDue(): Promise<number> {
    const { stores, outbox, now } = this.deps
    const at = now()
    const due = await stores.read.days.due(at, FINALIZE_BATCH)
    const byTenant = new Map<string, typeof due>()
    for (const row of due) byTenant.set(row.tenant_id, [...(byTenant.get(row.tenant_id) ?? []), row])
    for (const [tenantId, rows] of byTenant) {
      const tenant = await this.zoneOf(tenantId)
      if (!tenant) continue
      await stores.transaction(async (s) => {
        let changeAt = await s.tenants.reserveChangeTimes(tenantId, rows.length, at)
        const events = []
        for (const row of rows) {
          const updatedAt = changeAt++
          if (!(await s.days.markFinal(tenantId, row.id, row.revision, at, updatedAt))) continue
          const view = toAttendanceDay(
            { ...row, finalized_at: at, updated_at: updatedAt },
            tenant.timeZone,
            at,
            readRecord(row),
          )
          events.push({ type: 'attendance.day.finalized' as const, data: view })
        }
        await outbox.emit(s.outbox, tenantId, events)
      })
    }
    if (due.length > 0) outbox.committed()
    return due.length
  }

  /**
   * Makes the days of every active employee for each date up to today in each tenant's zone, once a
   * date: a worker who never punched has an ABSENT (or OFF) day too, which becomes final like any other.
   */
  async makeCalendars(): Promise<void> {
    const { stores, recomputer, now } = this.deps
    const at = now()
    if (at - this.lastCalendarCheck < CALENDAR_EVERY_US) return
    this.lastCalendarCheck = at
    for (const { id, time_zone } of await stores.read.tenants.listZones()) {
      const today = localDate(at, time_zone)
      const made = await stores.read.attendanceWork.madeThrough(id)
      if (made !== undefined && made >= today) continue
      const from = made === undefined ? addDays(today, -FIRST_CALENDAR_DAYS) : addDays(made, 1)
      let after: string | null = null
      let conflict = false
      const config = await recomputer.loadConfig(id)
      for (;;) {
        const codes = await stores.read.employees.codesAfter(id, after, 200, 'ACTIVE')
        for (const code of codes) {
          const result = await recomputer.recompute({ id, timeZone: time_zone }, code, from, today, config)
          conflict ||= result.conflict
          await yieldToRequests()
        }
        if (codes.length < 200) break
        after = codes.at(-1) ?? null
      }
      // A day lost to another writer is made on the next check: the dates stay to be made until then.
      if (!conflict) await stores.read.attendanceWork.setMadeThrough(id, today)
    }
  }

  /** Advances the oldest recompute job by one chunk of employees; true if there is more to do. */
  async advanceJob(): Promise<boolean> {
    const { stores, recomputer, now } = this.deps
    const work = stores.read.attendanceWork
    const job = await work.claimJob(now(), now() + JOB_LEASE_US)
    if (!job) return false
    const tenant = await this.zoneOf(job.tenant_id)
    try {
      if (!tenant) throw new Error('tenant not found')
      const listed =
        job.employee_codes === null ? undefined : (JSON.parse(job.employee_codes) as string[]).sort()
      const codes = listed
        ? listed
            .filter((c) => job.last_employee_code === null || c > job.last_employee_code)
            .slice(0, JOB_CHUNK)
        : await stores.read.employees.codesAfter(job.tenant_id, job.last_employee_code, JOB_CHUNK)
      let changed = 0
      const config = await recomputer.loadConfig(job.tenant_id)
      for (const code of codes) {
        // Another instance changing the same employee's days at once makes one of them try again.
        for (let attempt = 1; ; attempt++) {
          const result = await recomputer.recompute(tenant, code, job.from_date, job.to_date, config)
          changed += result.changed
          if (!result.conflict) break
          if (attempt === MAX_CONFLICTS) throw new Error(`recompute of ${code} kept conflicting`)
        }
        await yieldToRequests()
      }
      const finished = codes.length < JOB_CHUNK
      await work.updateJob(job.id, {
        employees_done: job.employees_done + codes.length,
        last_employee_code: codes.at(-1) ?? job.last_employee_code,
        days_changed: job.days_changed + changed,
        ...(finished ? { status: 'done', finished_at: now(), claimed_until: null } : { claimed_until: null }),
      })
      return !finished
    } catch (err) {
      this.deps.log.error({ err, jobId: job.id }, 'attendance recompute job failed')
      await work.updateJob(job.id, {
        status: 'failed',
        error: 'The recompute failed; see the server log. Start it again.',
        finished_at: now(),
        claimed_until: null,
      })
      return false
    }
  }
}
