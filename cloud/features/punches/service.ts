import { EMPLOYEE_CODE_PATTERN } from '../../../shared/employee.js'
import { isId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { answeredCode } from '../../../shared/problem.js'
import {
  type Punch,
  type PunchBatchResponse,
  type PunchInput,
  PunchInputSchema,
  type PunchListQuery,
} from '../../../shared/punch.js'
import { parseTimestamp } from '../../../shared/time.js'
import { AppError, toProblem } from '../../app-error.js'
import type { LiveCredentialCheck } from '../../auth/auth-context.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import { assertSameFilter, decodeCursor, readPage } from '../../cursor.js'
import type { LiveCredentialAt } from '../../db/live-credential.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { CloudMetrics } from '../../metrics/cloud-metrics.js'
import { compileCheck } from '../../validation.js'
import type { AttendanceQueue } from '../attendance/attendance-queue.js'
import type { IdempotencyKeyUse, IdempotencyService, Replayable } from '../idempotency/service.js'
import type { IdempotencyStore } from '../idempotency/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import { type IngestInput, type IngestStores, ingestPunches, type Outcome, toPunch } from './ingest.js'
import { insertNewPunch } from './insert-new-punch.js'
import type { PunchStore } from './store.js'

/** The stores punches use. */
export interface PunchStores extends IngestStores {
  punches: PunchStore
  idempotency: IdempotencyStore
}

/** A caller's credential from the cache: what the insert checks, and how to look it up instead. */
export interface CachedCredential {
  credential: LiveCredentialCheck
  /** The tenant as the credential's lookup finds it now; throws (a 401) if it is no longer live. */
  verify(): Promise<TenantContext>
}

export interface PunchPage {
  data: Punch[]
  nextCursor: string | null
}

const checkPunch = compileCheck<PunchInput>(PunchInputSchema)

const EMPLOYEE_CODE = new RegExp(EMPLOYEE_CODE_PATTERN)

// Every field is checked against what we put in: a cursor's values reach SQL, and PostgreSQL
// refuses some strings (NUL) with an error rather than an empty result (found by fuzzing).
function readCursor(v: Record<string, unknown>) {
  const { e, f, t, k } = v
  if (e !== undefined && (typeof e !== 'string' || !EMPLOYEE_CODE.test(e))) return undefined
  if (f !== undefined && !Number.isSafeInteger(f)) return undefined
  if (t !== undefined && !Number.isSafeInteger(t)) return undefined
  if (!Array.isArray(k) || k.length !== 2 || !Number.isSafeInteger(k[0])) return undefined
  if (!isId('punch', k[1])) return undefined
  return {
    employeeCode: e as string | undefined,
    from: f as number | undefined,
    to: t as number | undefined,
    after: { punchedAt: k[0] as number, id: k[1] },
  }
}

function batchResponse(received: number, outcomes: readonly Outcome[]): PunchBatchResponse {
  const summary = { received, created: 0, duplicate: 0, rejected: 0 }
  const results = outcomes.map((o) => {
    summary[o.status]++
    return o.status === 'rejected'
      ? { index: o.index, status: o.status, problem: toProblem(o.error) }
      : { index: o.index, status: o.status, punch: o.punch }
  })
  return { summary, results }
}

/** Punch ingestion and the raw punch log. */
export class PunchService {
  constructor(
    private readonly deps: {
      stores: UnitOfWork<PunchStores>
      outbox: WebhookOutbox
      attendance: AttendanceQueue
      idempotency: IdempotencyService
      now: () => number
      /** Told the outcome of every punch (the operators' metrics). */
      metrics?: Pick<CloudMetrics, 'punch'> | undefined
    },
  ) {}

  /**
   * One punch. A stored externalId or Idempotency-Key gives back the original punch, replayed. With
   * `cached`, the caller's credential came from the cache: the one-statement insert checks it is
   * still live, and any other path has it verified (looked up again) first
   * (docs/decisions/0091-credential-cache-checked-by-the-write.md).
   */
  async record(
    tenant: TenantContext,
    input: PunchInput,
    idempotencyKey?: IdempotencyKeyUse,
    cached?: CachedCredential,
  ): Promise<Replayable<Punch>> {
    try {
      const recorded = await this.recordOne(tenant, input, idempotencyKey, cached)
      this.deps.metrics?.punch(recorded.replayed ? 'duplicate' : 'created')
      return recorded
    } catch (err) {
      // Counted under the code the client was answered with, as a batch's are.
      if (err instanceof AppError) this.deps.metrics?.punch('rejected', answeredCode(err.code))
      throw err
    }
  }

  private async recordOne(
    given: TenantContext,
    input: PunchInput,
    idempotencyKey: IdempotencyKeyUse | undefined,
    cached: CachedCredential | undefined,
  ): Promise<Replayable<Punch>> {
    const now = this.deps.now()
    // Without a key there is no response to record with the punch: a new punch can be stored in
    // one statement. Whatever that does not store, the full path below answers.
    if (!idempotencyKey) {
      const created = await insertNewPunch(this.deps, given, now, input, cached?.credential)
      if (created?.status === 'created') return { body: created.punch, replayed: false }
    }
    // The full path checks nothing of the credential: a cached one is looked up first.
    const tenant = cached ? await cached.verify() : given
    const keyed = { key: idempotencyKey, operation: 'POST /attendance/punches', body: input }
    return this.deps.idempotency.once<Punch, PunchStores>(tenant.id, keyed, async (recordResponse) => {
      const [outcome] = await ingestPunches(this.deps, tenant, now, [{ index: 0, input }], (s, o) =>
        o[0]?.status === 'created' ? recordResponse(s, { status: 201, body: o[0].punch }) : Promise.resolve(),
      )
      if (!outcome) throw new Error('ingest returned no outcome')
      if (outcome.status === 'rejected') throw outcome.error
      return { body: outcome.punch, replayed: outcome.status === 'duplicate' }
    })
  }

  /** Up to 500 punches, each checked on its own: one bad item never fails the others. */
  async recordBatch(
    tenant: TenantContext,
    items: readonly unknown[],
    idempotencyKey?: IdempotencyKeyUse,
  ): Promise<Replayable<PunchBatchResponse>> {
    const recorded = await this.recordMany(tenant, items, idempotencyKey)
    const { metrics } = this.deps
    if (metrics) {
      for (const result of recorded.body.results) {
        if (recorded.replayed) metrics.punch('duplicate')
        else if (result.status === 'rejected') metrics.punch('rejected', result.problem?.code)
        else metrics.punch(result.status)
      }
    }
    return recorded
  }

  private async recordMany(
    tenant: TenantContext,
    items: readonly unknown[],
    idempotencyKey?: IdempotencyKeyUse,
  ): Promise<Replayable<PunchBatchResponse>> {
    const keyed = { key: idempotencyKey, operation: 'POST /attendance/punches/batch', body: items }
    return this.deps.idempotency.once<PunchBatchResponse, PunchStores>(
      tenant.id,
      keyed,
      async (recordResponse) => {
        const valid: IngestInput[] = []
        const invalid: Outcome[] = []
        items.forEach((item, index) => {
          const checked = checkPunch(item, `/punches/${index}`)
          if (checked.ok) valid.push({ index, input: checked.value })
          else {
            const error = new AppError('validation_failed', 'This punch is not valid; see errors.', {
              errors: checked.errors,
            })
            invalid.push({ index, status: 'rejected', error })
          }
        })
        const merge = (outcomes: Outcome[]) =>
          batchResponse(
            items.length,
            [...outcomes, ...invalid].sort((a, b) => a.index - b.index),
          )
        const outcomes = await ingestPunches(this.deps, tenant, this.deps.now(), valid, (s, o) =>
          recordResponse(s, { status: 200, body: merge(o) }),
        )
        return { body: merge(outcomes), replayed: false }
      },
    )
  }

  async get(tenant: TenantContext, punchId: string): Promise<Punch> {
    const row = await this.deps.stores.read.punches.get(tenant.id, punchId)
    if (!row) throw new AppError('punch_not_found', `No punch ${punchId}.`)
    return toPunch(row, tenant.timeZone)
  }

  async list(tenant: TenantContext, query: PunchListQuery): Promise<PunchPage> {
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
    query: PunchListQuery,
    caller: LiveCredentialCheck,
  ): Promise<PunchPage | undefined> {
    const page = await this.readPage(tenant, query, { ...caller, now: this.deps.now() })
    return page.data.length > 0 ? page : undefined
  }

  private async readPage(
    tenant: TenantContext,
    query: PunchListQuery,
    liveCredential?: LiveCredentialAt,
  ): Promise<PunchPage> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let employeeCode = query.employeeCode
    let from = query.from === undefined ? undefined : parseTimestamp(query.from)
    let to = query.to === undefined ? undefined : parseTimestamp(query.to)
    let after: { punchedAt: number; id: string } | undefined
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, readCursor)
      assertSameFilter('employeeCode', employeeCode, cursor.employeeCode)
      assertSameFilter('from', from, cursor.from)
      assertSameFilter('to', to, cursor.to)
      ;({ employeeCode, from, to, after } = cursor)
    }
    const { rows, nextCursor } = await readPage(
      limit,
      (n) =>
        this.deps.stores.read.punches.list(tenant.id, {
          employeeCode,
          from,
          to,
          after,
          limit: n,
          ...(liveCredential && { liveCredential }),
        }),
      (last) => ({ e: employeeCode, f: from, t: to, k: [last.punched_at, last.id] }),
    )
    return { data: rows.map((r) => toPunch(r, tenant.timeZone)), nextCursor }
  }
}
