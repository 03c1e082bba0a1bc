import {
  type AttendanceDay,
  type AttendanceDayDetail,
  type AttendanceDayListQuery,
  type AttendanceExportQuery,
  type AttendanceSummary,
  type AttendanceSummaryQuery,
  DAY_STATES,
  DAY_STATUSES,
  type LockInput,
  MAX_RANGE_DAYS,
  MAX_RECOMPUTE_DAYS,
  type RecomputeInput,
  type RecomputeJob,
} from '../../../shared/attendance.js'
import { csvRow } from '../../../shared/csv-cell.js'
import { EMPLOYEE_CODE_PATTERN } from '../../../shared/employee.js'
import { isId, newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { formatServerTime, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { LiveCredentialCheck } from '../../auth/auth-context.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import { assertSameFilter, decodeCursor, readPage } from '../../cursor.js'
import type { LiveCredentialAt } from '../../db/live-credential.js'
import type { AttendanceJobsTable } from '../../db/schema.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type { EmployeeStore } from '../employees/store.js'
import type { TenantStore } from '../tenants/store.js'
import type { AttendanceWorkStore } from './attendance-work-store.js'
import type { AttendanceConfigStore } from './config-store.js'
import type { DayListFilter, DayStore } from './day-store.js'
import { readRecord, toAttendanceDay, toAttendanceDayDetail } from './day-view.js'
import { summarize } from './engine/summarize.js'
import { parseSettings, resolvePolicy } from './policy-resolution.js'
import { addDays, daysBetween, isCalendarDate, localDate, weekdayOf } from './work-dates.js'

/** The stores the day reads, jobs and locks use. */
export interface AttendanceStores {
  tenants: Pick<TenantStore, 'reserveChangeTimes'>
  employees: Pick<EmployeeStore, 'findByCodes' | 'codesAfter' | 'count'>
  days: DayStore
  attendanceConfig: Pick<AttendanceConfigStore, 'policiesFor'>
  attendanceWork: Pick<AttendanceWorkStore, 'insertJob' | 'getJob' | 'countActiveJobs'>
  audit: AuditStore
}

/** Recompute jobs a tenant may have queued or running at once. */
const MAX_ACTIVE_JOBS = 3

const EMPLOYEE_CODE = new RegExp(EMPLOYEE_CODE_PATTERN)
const DATE = /^\d{4}-\d{2}-\d{2}$/

export const ATTENDANCE_CSV_COLUMNS = [
  'employeeCode',
  'workDate',
  'shiftCode',
  'dayType',
  'status',
  'state',
  'firstIn',
  'lastOut',
  'workedMinutes',
  'breakMinutes',
  'lateMinutes',
  'earlyExitMinutes',
  'overtimeMinutes',
  'spreadOverMinutes',
  'flags',
  'revision',
] as const

function rangeError(where: 'query' | 'body', pointer: string, message: string): AppError {
  return new AppError('validation_failed', message, { errors: [{ in: where, pointer, message }] })
}

/** Checks `from`..`to` are real dates, in order, spanning at most `max` dates (both included). */
export function checkRange(
  from: string | undefined,
  to: string | undefined,
  max: number,
  where: 'query' | 'body' = 'query',
): void {
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (value !== undefined && !isCalendarDate(value))
      throw rangeError(where, `#/${name}`, `${value} is not a calendar date`)
  }
  if (from !== undefined && to !== undefined) {
    if (to < from) throw rangeError(where, '#/to', 'is before from')
    if (daysBetween(from, to) >= max)
      throw rangeError(where, '#/to', `from to to spans more than ${max} dates`)
  }
}

/** A page of attendance days. */
export interface AttendanceDayPage {
  data: AttendanceDay[]
  nextCursor: string | null
}

interface DayFilters {
  f?: string
  t?: string
  e?: string
  s?: AttendanceDayListQuery['status']
  st?: AttendanceDayListQuery['state']
}

/** A cursor's short keys, and the query parameters they stand for (named in errors). */
const FILTER_NAMES = [
  ['f', 'from'],
  ['t', 'to'],
  ['e', 'employeeCode'],
  ['s', 'status'],
  ['st', 'state'],
] as const

type DayCursor = DayFilters &
  ({ mode: 'list'; k: [string, string] } | { mode: 'sync'; u: number; k: [number, string] })

function readDayCursor(v: Record<string, unknown>): DayCursor | undefined {
  const { f, t, e, s, st, u, k } = v
  const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || ok(x)
  const isDate = (x: unknown) => typeof x === 'string' && DATE.test(x)
  if (!optional(f, isDate) || !optional(t, isDate)) return undefined
  if (!optional(e, (x) => typeof x === 'string' && EMPLOYEE_CODE.test(x))) return undefined
  if (!optional(s, (x) => (DAY_STATUSES as readonly unknown[]).includes(x))) return undefined
  if (!optional(st, (x) => (DAY_STATES as readonly unknown[]).includes(x))) return undefined
  if (!Array.isArray(k) || k.length !== 2) return undefined
  const filters = {
    f: f as string | undefined,
    t: t as string | undefined,
    e: e as string | undefined,
    s: s as AttendanceDayListQuery['status'],
    st: st as AttendanceDayListQuery['state'],
  }
  if (u === undefined) {
    if (typeof k[0] !== 'string' || !EMPLOYEE_CODE.test(k[0]) || !isDate(k[1])) return undefined
    return { mode: 'list', ...filters, k: [k[0], k[1] as string] }
  }
  if (!Number.isSafeInteger(u) || !Number.isSafeInteger(k[0]) || !isId('attendanceDay', k[1]))
    return undefined
  return { mode: 'sync', ...filters, u: u as number, k: [k[0] as number, k[1] as string] }
}

function toJob(row: AttendanceJobsTable): RecomputeJob {
  return {
    id: row.id,
    status: row.status as RecomputeJob['status'],
    from: row.from_date,
    to: row.to_date,
    employees: row.employees,
    employeesDone: row.employees_done,
    daysChanged: row.days_changed,
    createdAt: formatServerTime(row.created_at),
    finishedAt: row.finished_at === null ? null : formatServerTime(row.finished_at),
    error: row.error,
  }
}

/**
 * Attendance days as HR systems read them: a listing and an incremental sync like the employee
 * directory's, one day with its pairs and explanation, period totals for payroll, the CSV export,
 * recompute jobs, and locking a period once payroll has closed it.
 */
export class AttendanceService {
  constructor(
    private readonly deps: { stores: UnitOfWork<AttendanceStores>; audit: AuditService; now: () => number },
  ) {}

  async list(tenant: TenantContext, query: AttendanceDayListQuery): Promise<AttendanceDayPage> {
    return this.readPage(tenant, query)
  }

  /**
   * `list` for a caller whose credential came from the cache, checked by the page's own statement:
   * undefined when that finds nothing (an empty page, or the credential no longer live), and the
   * caller looks its credential up, then calls `list`
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  async listForCachedCaller(
    tenant: TenantContext,
    query: AttendanceDayListQuery,
    caller: LiveCredentialCheck,
  ): Promise<AttendanceDayPage | undefined> {
    const page = await this.readPage(tenant, query, { ...caller, now: this.deps.now() })
    return page.data.length > 0 ? page : undefined
  }

  private async readPage(
    tenant: TenantContext,
    query: AttendanceDayListQuery,
    liveCredential?: LiveCredentialAt,
  ): Promise<AttendanceDayPage> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let filters: DayFilters = {
      f: query.from,
      t: query.to,
      e: query.employeeCode,
      s: query.status,
      st: query.state,
    }
    let updatedSince = query.updatedSince === undefined ? undefined : parseTimestamp(query.updatedSince)
    let after: { employeeCode: string; workDate: string } | { updatedAt: number; id: string } | undefined
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, readDayCursor)
      for (const [key, name] of FILTER_NAMES) assertSameFilter(name, filters[key], cursor[key])
      if (cursor.mode === 'sync') {
        assertSameFilter('updatedSince', updatedSince, cursor.u)
        updatedSince = cursor.u
        after = { updatedAt: cursor.k[0], id: cursor.k[1] }
      } else {
        if (updatedSince !== undefined) assertSameFilter('updatedSince', updatedSince, undefined)
        after = { employeeCode: cursor.k[0], workDate: cursor.k[1] }
      }
      filters = { f: cursor.f, t: cursor.t, e: cursor.e, s: cursor.s, st: cursor.st }
    }
    checkRange(filters.f, filters.t, Number.MAX_SAFE_INTEGER)
    const now = this.deps.now()
    const { rows, nextCursor } = await readPage(
      limit,
      (n) =>
        this.deps.stores.read.days.list(tenant.id, {
          from: filters.f,
          to: filters.t,
          employeeCode: filters.e,
          status: filters.s,
          state: filters.st as DayListFilter['state'],
          now,
          updatedSince,
          after,
          limit: n,
          ...(liveCredential && { liveCredential }),
        }),
      (last) =>
        updatedSince === undefined
          ? { ...filters, k: [last.employee_code, last.work_date] }
          : { ...filters, u: updatedSince, k: [last.updated_at, last.id] },
    )
    return { data: rows.map((r) => toAttendanceDay(r, tenant.timeZone, now)), nextCursor }
  }

  async get(tenant: TenantContext, employeeCode: string, workDate: string): Promise<AttendanceDayDetail> {
    const row = isCalendarDate(workDate)
      ? await this.deps.stores.read.days.get(tenant.id, employeeCode, workDate)
      : undefined
    if (!row)
      throw new AppError(
        'attendance_day_not_found',
        `No attendance day for ${employeeCode} on ${workDate}: days are made for active employees from the date attendance began, and for any date with punches.`,
      )
    return toAttendanceDayDetail(row, tenant.timeZone, this.deps.now())
  }

  /** The payroll export: one CSV line per day, every cell safe to open in a spreadsheet. */
  async *exportCsv(tenant: TenantContext, query: AttendanceExportQuery): AsyncGenerator<string> {
    checkRange(query.from, query.to, MAX_RANGE_DAYS)
    const now = this.deps.now()
    // The header goes out with the first page, read before anything is sent: a database failure
    // there is a problem answer, not a 200 cut short that a payroll client could take as complete.
    let chunk = `${csvRow(ATTENDANCE_CSV_COLUMNS)}\r\n`
    let after: { employeeCode: string; workDate: string } | undefined
    for (;;) {
      const rows = await this.deps.stores.read.days.list(tenant.id, {
        from: query.from,
        to: query.to,
        employeeCode: query.employeeCode,
        now,
        after,
        limit: 1000,
      })
      for (const row of rows) {
        const d = toAttendanceDay(row, tenant.timeZone, now)
        chunk += `${csvRow([
          d.employeeCode,
          d.workDate,
          d.shiftCode,
          d.dayType,
          d.status,
          d.state,
          d.firstIn,
          d.lastOut,
          d.workedMinutes,
          d.breakMinutes,
          d.lateMinutes,
          d.earlyExitMinutes,
          d.overtimeMinutes,
          d.spreadOverMinutes,
          d.flags.join(' '),
          d.revision,
        ])}\r\n`
      }
      if (chunk !== '') yield chunk
      chunk = ''
      const last = rows.at(-1)
      if (!last || rows.length < 1000) return
      after = { employeeCode: last.employee_code, workDate: last.work_date }
    }
  }

  /**
   * Period totals per employee, for payroll. Weekly overtime is counted in the period that holds the
   * week's last day, so consecutive periods never count a week twice (Factories Act s.59: overtime
   * beyond 48 hours a week, less what daily overtime already paid).
   */
  async summaries(
    tenant: TenantContext,
    query: AttendanceSummaryQuery,
  ): Promise<{ data: AttendanceSummary[]; nextCursor: string | null }> {
    checkRange(query.from, query.to, MAX_RANGE_DAYS)
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const read = this.deps.stores.read
    let after: string | null = null
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, (v) =>
        typeof v.a === 'string' && EMPLOYEE_CODE.test(v.a) && v.f === query.from && v.t === query.to
          ? { a: v.a }
          : undefined,
      )
      after = cursor.a
    }
    const codes =
      query.employeeCode !== undefined
        ? after === null
          ? [query.employeeCode]
          : []
        : await read.employees.codesAfter(tenant.id, after, limit + 1)
    const page = codes.slice(0, limit)
    const data: AttendanceSummary[] = []
    for (const code of page) {
      const [employee] = await read.employees.findByCodes(tenant.id, [code])
      if (!employee) throw new AppError('employee_not_found', `No employee with code ${code}.`)
      const group = employee.department ?? ''
      const policies = await read.attendanceConfig.policiesFor(tenant.id, group)
      const settingsOf = (g: string) => {
        const row = policies.find((p) => p.group_name === g)
        return row ? parseSettings(row.settings) : undefined
      }
      const policy = resolvePolicy(settingsOf(''), group === '' ? undefined : settingsOf(group))
      // From the start of the week that holds `from`: that week's overtime is counted here if it ends here.
      const back = (weekdayOf(query.from) - policy.weekStart + 7) % 7
      const rows = await read.days.forDates(tenant.id, code, addDays(query.from, -back), query.to)
      const summary = summarize(rows.map(readRecord), policy, query.from, query.to)
      data.push({ ...summary, employeeCode: code, from: query.from, to: query.to })
    }
    const last = page.at(-1)
    const nextCursor =
      codes.length > limit && last !== undefined
        ? Buffer.from(JSON.stringify({ a: last, f: query.from, t: query.to })).toString('base64url')
        : null
    return { data, nextCursor }
  }

  async startRecompute(tenant: TenantContext, input: RecomputeInput, actor: Actor): Promise<RecomputeJob> {
    checkRange(input.from, input.to, MAX_RECOMPUTE_DAYS, 'body')
    const now = this.deps.now()
    // A date that has not begun has no day yet: the worker makes it when it comes. Computed now it
    // would be an ABSENT day in every export and summary until then.
    const today = localDate(now, tenant.timeZone)
    if (input.from > today)
      throw rangeError('body', '#/from', `is after today (${today} in the tenant's time zone)`)
    const to = input.to > today ? today : input.to
    const row = await this.deps.stores.transaction(async (s) => {
      if ((await s.attendanceWork.countActiveJobs(tenant.id)) >= MAX_ACTIVE_JOBS)
        throw new AppError(
          'recompute_jobs_busy',
          `The tenant has ${MAX_ACTIVE_JOBS} recompute jobs waiting or running; wait for one to finish.`,
          { retryAfterSeconds: 30 },
        )
      const codes = input.employeeCodes ? [...input.employeeCodes].sort() : null
      const job: AttendanceJobsTable = {
        id: newId('recomputeJob', Math.floor(now / 1000)),
        tenant_id: tenant.id,
        status: 'queued',
        from_date: input.from,
        to_date: to,
        employee_codes: codes === null ? null : JSON.stringify(codes),
        employees: codes === null ? await s.employees.count(tenant.id) : codes.length,
        employees_done: 0,
        last_employee_code: null,
        days_changed: 0,
        claimed_until: null,
        error: null,
        created_at: now,
        finished_at: null,
      }
      await s.attendanceWork.insertJob(job)
      await this.deps.audit.record(s.audit, tenant.id, actor, {
        action: 'attendance.recompute_started',
        target: { type: 'recompute_job', id: job.id },
        details: { from: input.from, to, employees: job.employees },
      })
      return job
    })
    return toJob(row)
  }

  async getJob(tenant: TenantContext, jobId: string): Promise<RecomputeJob> {
    const row = isId('recomputeJob', jobId)
      ? await this.deps.stores.read.attendanceWork.getJob(tenant.id, jobId)
      : undefined
    if (!row) throw new AppError('recompute_job_not_found', `No recompute job ${jobId}.`)
    return toJob(row)
  }

  /**
   * Locks a period once payroll has closed it: its days never change again. Every day in it must be
   * final first; a punch that arrives later for a locked day is kept in the log and flagged on it.
   */
  async lock(tenant: TenantContext, input: LockInput, actor: Actor): Promise<{ locked: number }> {
    checkRange(input.from, input.to, MAX_RECOMPUTE_DAYS, 'body')
    const now = this.deps.now()
    if (input.to >= localDate(now, tenant.timeZone))
      throw new AppError(
        'days_not_final',
        `The period has not ended: lock it once ${input.to} is over and its days are final.`,
      )
    return this.deps.stores.transaction(async (s) => {
      const notFinal = await s.days.countNotFinal(tenant.id, input.from, input.to)
      if (notFinal > 0)
        throw new AppError(
          'days_not_final',
          `${notFinal} day(s) from ${input.from} to ${input.to} are not final yet; lock the period once they are.`,
        )
      // The period itself is kept locked, so that a day first made in it later is made locked too.
      await s.days.insertLock({
        tenant_id: tenant.id,
        from_date: input.from,
        to_date: input.to,
        locked_at: now,
      })
      const ids = await s.days.unlockedIds(tenant.id, input.from, input.to)
      let changeAt = ids.length > 0 ? await s.tenants.reserveChangeTimes(tenant.id, ids.length, now) : 0
      for (const { id } of ids) await s.days.markLocked(tenant.id, id, now, changeAt++)
      await this.deps.audit.record(s.audit, tenant.id, actor, {
        action: 'attendance.period_locked',
        target: { type: 'attendance_period', id: `${input.from}..${input.to}` },
        details: { days: ids.length },
      })
      return { locked: ids.length }
    })
  }
}
