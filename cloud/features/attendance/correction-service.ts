import type { Correction } from '../../../shared/attendance.js'
import { isId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import type { Punch, PunchInput } from '../../../shared/punch.js'
import { formatServerTime } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import { decodeCursor, readPage } from '../../cursor.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type {
  IdempotencyKeyUse,
  IdempotencyService,
  Replayable,
  ResponseRecorder,
} from '../idempotency/service.js'
import type { IdempotencyStore } from '../idempotency/store.js'
import { type IngestStores, ingestPunches } from '../punches/ingest.js'
import type { PunchStore } from '../punches/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import type { AttendanceQueue } from './attendance-queue.js'
import type { AttendanceWorkStore } from './attendance-work-store.js'
import type { CorrectionRow, CorrectionStore } from './correction-store.js'
import type { DayStore } from './day-store.js'
import { addDays, localDate } from './work-dates.js'

/** The stores corrections use. */
export interface CorrectionStores extends IngestStores {
  punches: IngestStores['punches'] & Pick<PunchStore, 'get'>
  corrections: CorrectionStore
  attendanceWork: Pick<AttendanceWorkStore, 'enqueue'>
  days: Pick<DayStore, 'forDates'>
  audit: AuditStore
  idempotency: IdempotencyStore
}

function toCorrection(row: CorrectionRow): Correction {
  return {
    punchId: row.punch_id,
    kind: row.kind as Correction['kind'],
    reason: row.reason,
    actor: row.actor,
    createdAt: formatServerTime(row.created_at),
  }
}

const KINDS = ['manual', 'void']

function readCursor(v: Record<string, unknown>) {
  const { k } = v
  if (!Array.isArray(k) || k.length !== 3) return undefined
  const [createdAt, punchId, kind] = k
  if (!Number.isSafeInteger(createdAt) || !isId('punch', punchId) || !KINDS.includes(kind as string))
    return undefined
  return { createdAt: createdAt as number, punchId: punchId as string, kind: kind as string }
}

/**
 * Corrections to attendance, which never edit the raw punch log (docs/decisions/0085-attendance-days-are-a-pure-function.md):
 * a manual punch, stored like any punch with `source: manual` and kept with its reason and who added
 * it; or a void, which keeps the punch in the log and leaves it out of its day. Each is audited, in
 * the transaction that makes it, and its day is queued to be recomputed.
 */
export class CorrectionService {
  constructor(
    private readonly deps: {
      stores: UnitOfWork<CorrectionStores>
      outbox: WebhookOutbox
      attendance: AttendanceQueue
      audit: AuditService
      idempotency: IdempotencyService
      now: () => number
    },
  ) {}

  /**
   * Adds a manual punch. A retry with the same externalId, or the same Idempotency-Key (the same
   * route as any punch, so one key space), returns the one stored, replayed.
   */
  async addManualPunch(
    tenant: TenantContext,
    input: PunchInput,
    actor: Actor,
    idempotencyKey?: IdempotencyKeyUse,
  ): Promise<Replayable<Punch>> {
    const keyed = { key: idempotencyKey, operation: 'POST /attendance/punches', body: input }
    return this.deps.idempotency.once<Punch, CorrectionStores>(tenant.id, keyed, (recordResponse) =>
      this.storeManualPunch(tenant, input, actor, recordResponse),
    )
  }

  private async storeManualPunch(
    tenant: TenantContext,
    input: PunchInput,
    actor: Actor,
    recordResponse: ResponseRecorder<CorrectionStores>,
  ): Promise<Replayable<Punch>> {
    const now = this.deps.now()
    const [outcome] = await ingestPunches(
      { ...this.deps, manual: true },
      tenant,
      now,
      [{ index: 0, input }],
      async (s, outcomes) => {
        const created = outcomes[0]
        if (created?.status !== 'created') return
        await recordResponse(s, { status: 201, body: created.punch })
        await s.corrections.insert({
          tenant_id: tenant.id,
          punch_id: created.punch.id,
          kind: 'manual',
          reason: input.reason ?? '',
          actor: actor.name,
          created_at: now,
        })
        await this.deps.audit.record(s.audit, tenant.id, actor, {
          action: 'punch.manual_added',
          target: { type: 'punch', id: created.punch.id },
          details: {
            employeeCode: input.employeeCode,
            punchType: input.punchType,
            punchedAt: created.punch.punchedAt,
            reason: input.reason,
          },
        })
      },
    )
    if (!outcome) throw new Error('ingest returned no outcome')
    if (outcome.status === 'rejected') throw outcome.error
    return { body: outcome.punch, replayed: outcome.status === 'duplicate' }
  }

  /** Voids a punch: it stays in the log and leaves its day, which is recomputed. */
  async voidPunch(tenant: TenantContext, punchId: string, reason: string, actor: Actor): Promise<Correction> {
    const now = this.deps.now()
    const row = await this.deps.stores.transaction(async (s) => {
      const punch = await s.punches.get(tenant.id, punchId)
      if (!punch) throw new AppError('punch_not_found', `No punch ${punchId}.`)
      const correction: CorrectionRow = {
        tenant_id: tenant.id,
        punch_id: punchId,
        kind: 'void',
        reason,
        actor: actor.name,
        created_at: now,
      }
      // A locked day never changes (docs/decisions/0085-attendance-days-are-a-pure-function.md): a void
      // that could not take effect is refused rather than recorded.
      const date = localDate(punch.punched_at, tenant.timeZone)
      const days = await s.days.forDates(tenant.id, punch.employee_code, addDays(date, -1), addDays(date, 1))
      if (days.some((d) => d.locked_at !== null && d.record.includes(`"${punchId}"`)))
        throw new AppError(
          'day_locked',
          `Punch ${punchId} counts on a day payroll has locked; it cannot be voided.`,
        )
      if (!(await s.corrections.insert(correction)))
        throw new AppError('punch_already_voided', `Punch ${punchId} is already voided.`)
      await this.deps.audit.record(s.audit, tenant.id, actor, {
        action: 'punch.voided',
        target: { type: 'punch', id: punchId },
        details: { employeeCode: punch.employee_code, reason },
      })
      await this.deps.attendance.enqueue(s.attendanceWork, tenant, [
        { employeeCode: punch.employee_code, punchedAt: punch.punched_at },
      ])
      return correction
    })
    this.deps.attendance.committed()
    return toCorrection(row)
  }

  /** Newest first. */
  async list(
    tenantId: string,
    query: { limit?: number; cursor?: string },
  ): Promise<{ data: Correction[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, readCursor)
    const { rows, nextCursor } = await readPage(
      limit,
      (n) => this.deps.stores.read.corrections.list(tenantId, { after, limit: n }),
      (last) => ({ k: [last.created_at, last.punch_id, last.kind] }),
    )
    return { data: rows.map(toCorrection), nextCursor }
  }
}
