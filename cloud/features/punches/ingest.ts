import { newId } from '../../../shared/ids.js'
import { MAX_FUTURE_SKEW_SECONDS, type Punch, type PunchInput } from '../../../shared/punch.js'
import { formatInZone, formatServerTime, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AttendanceQueue } from '../attendance/attendance-queue.js'
import type { AttendanceWorkStore } from '../attendance/attendance-work-store.js'
import type { EmployeeStore } from '../employees/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import type { OutboxStore } from '../webhooks/outbox-store.js'
import { punchFingerprint } from './punch-fingerprint.js'
import type { PunchRow, PunchStore } from './store.js'

/** The stores an ingest uses. */
export interface IngestStores {
  employees: Pick<EmployeeStore, 'findByCodes'>
  punches: Pick<
    PunchStore,
    'findByExternalIds' | 'insertMany' | 'insertNew' | 'insertNewFromEmployee' | 'insertsInOneStatement'
  >
  outbox: OutboxStore
  attendanceWork: Pick<AttendanceWorkStore, 'enqueue'>
}

export type Outcome = { index: number } & (
  | { status: 'created' | 'duplicate'; punch: Punch }
  | { status: 'rejected'; error: AppError }
)

export interface IngestInput {
  /** Position in the request, carried to the outcome. */
  index: number
  /** Already checked against PunchInputSchema. */
  input: PunchInput
}

interface Candidate extends IngestInput {
  punchedAt: number | null
  fingerprint: string
}

export function toPunch(row: Omit<PunchRow, 'tenant_id' | 'employee_id'>, timeZone: string): Punch {
  return {
    id: row.id,
    employeeCode: row.employee_code,
    punchType: row.punch_type as Punch['punchType'],
    punchedAt: formatInZone(row.punched_at, timeZone),
    receivedAt: formatServerTime(row.received_at),
    deviceId: row.device_id,
    source: row.source,
    externalId: row.external_id,
  }
}

function externalIdReused(externalId: string): AppError {
  return new AppError(
    'external_id_reused',
    `externalId ${externalId} already names a different punch. An externalId is permanent: use a new one.`,
  )
}

/**
 * Stores punches, returning one outcome per input in input order. In turn: dedupe by externalId
 * within the request; check the time window and the employee; insert, where a stored externalId
 * makes the punch a duplicate.
 * `onCommit` runs inside the insert's transaction, with its stores and the final outcomes (the
 * idempotency record), and only when something is inserted. The punch log is append-only: nothing
 * here updates a punch.
 */
export async function ingestPunches<S extends IngestStores>(
  {
    stores,
    outbox,
    attendance,
    manual = false,
  }: {
    stores: UnitOfWork<S>
    outbox: WebhookOutbox
    attendance: AttendanceQueue
    /** A correction: punches with `source: manual` and a reason are what is expected, and nothing else. */
    manual?: boolean
  },
  tenant: TenantContext,
  now: number,
  inputs: readonly IngestInput[],
  onCommit: (stores: S, outcomes: Outcome[]) => Promise<void>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  const duplicateOf = (c: Candidate, row: Omit<PunchRow, 'tenant_id'>): Outcome =>
    row.fingerprint === c.fingerprint
      ? { index: c.index, status: 'duplicate', punch: toPunch(row, tenant.timeZone) }
      : { index: c.index, status: 'rejected', error: externalIdReused(row.external_id ?? '') }
  const storedByExternalId = async (punches: IngestStores['punches'], cs: Candidate[]) =>
    new Map(
      (
        await punches.findByExternalIds(
          tenant.id,
          cs.map((c) => c.input.externalId as string),
        )
      ).map((r) => [r.external_id, r]),
    )

  // 1. Within the request, a later item with an externalId seen earlier follows the first one.
  const candidates: Candidate[] = []
  const firstByExternalId = new Map<string, Candidate>()
  const followers: { candidate: Candidate; first: Candidate }[] = []
  for (const { index, input } of inputs) {
    const punchedAt = input.punchedAt == null ? null : (parseTimestamp(input.punchedAt) ?? null)
    const candidate: Candidate = { index, input, punchedAt, fingerprint: punchFingerprint(input, punchedAt) }
    const externalId = input.externalId
    if (externalId != null) {
      const first = firstByExternalId.get(externalId)
      if (first && first.fingerprint === candidate.fingerprint) followers.push({ candidate, first })
      else if (first) outcomes.push({ index, status: 'rejected', error: externalIdReused(externalId) })
      else {
        firstByExternalId.set(externalId, candidate)
        candidates.push(candidate)
      }
    } else candidates.push(candidate)
  }

  // 2. The time window and the employee.
  const codes = [...new Set(candidates.map((c) => c.input.employeeCode))]
  const employees = new Map(
    (codes.length > 0 ? await stores.read.employees.findByCodes(tenant.id, codes) : []).map((e) => [
      e.employee_code,
      e,
    ]),
  )
  const rows: { row: Omit<PunchRow, 'tenant_id'>; candidate: Candidate }[] = []
  const refused: { candidate: Candidate; error: AppError }[] = []
  for (const c of candidates) {
    const at = c.punchedAt ?? now
    const employee = employees.get(c.input.employeeCode)
    // The manual check first: a manual punch is a correction, made only through the path that audits it.
    let error: AppError | undefined = manualPunchError(c.input, manual) ?? punchedAtError(at, now, tenant)
    if (error) {
      // Refused already.
    } else if (!employee) {
      error = new AppError('punch_employee_not_found', `No employee with code ${c.input.employeeCode}.`)
    } else if (employee.status !== 'ACTIVE') {
      error = new AppError('employee_not_active', `Employee ${c.input.employeeCode} is ${employee.status}.`)
    }
    if (error || !employee) {
      refused.push({ candidate: c, error: error as AppError })
      continue
    }
    rows.push({
      candidate: c,
      row: {
        id: newId('punch', Math.floor(now / 1000)),
        employee_id: employee.id,
        employee_code: c.input.employeeCode,
        punch_type: c.input.punchType,
        punched_at: at,
        received_at: now,
        device_id: c.input.deviceId ?? null,
        source: c.input.source ?? null,
        external_id: c.input.externalId ?? null,
        fingerprint: c.fingerprint,
      },
    })
  }

  // 3. A refused punch that is a retry of a stored one is a duplicate: it may have aged out of the
  //    backfill window, or its employee left, since it was stored.
  const refusedWithId = refused.filter((r) => r.candidate.input.externalId != null)
  const storedRefused =
    refusedWithId.length > 0
      ? await storedByExternalId(
          stores.read.punches,
          refusedWithId.map((r) => r.candidate),
        )
      : undefined
  for (const { candidate, error } of refused) {
    const row =
      candidate.input.externalId == null ? undefined : storedRefused?.get(candidate.input.externalId)
    outcomes.push(row ? duplicateOf(candidate, row) : { index: candidate.index, status: 'rejected', error })
  }

  if (rows.length === 0) return withFollowers(outcomes, followers)

  // 4. Insert, with whatever the caller must record with it, in one transaction. A punch whose
  //    externalId is already stored is not inserted; it is a duplicate of the stored one. Trying the
  //    insert first spares new punches, the common case, a lookup.
  const rowsById = new Map(rows.map((r) => [r.row.id, r.row.punched_at]))
  const stored = await stores.transaction(async (s) => {
    const inserted = await s.punches.insertMany(
      tenant.id,
      rows.map((r) => r.row),
    )
    const done = [...outcomes]
    const existing: Candidate[] = []
    for (const { row, candidate } of rows) {
      if (inserted.has(row.id))
        done.push({ index: candidate.index, status: 'created', punch: toPunch(row, tenant.timeZone) })
      else existing.push(candidate)
    }
    if (existing.length > 0) {
      const stored = await storedByExternalId(s.punches, existing)
      for (const c of existing) {
        const row = stored.get(c.input.externalId as string)
        if (!row) throw new Error('punch neither inserted nor found by its externalId')
        done.push(duplicateOf(c, row))
      }
    }
    const final = withFollowers(done, followers)
    await onCommit(s, final)
    // The attendance.punch.created events, in the punches' own transaction (the outbox,
    // docs/decisions/0020-webhook-outbox.md).
    await outbox.emit(
      s.outbox,
      tenant.id,
      final.flatMap((o) =>
        o.status === 'created' ? [{ type: 'attendance.punch.created' as const, data: o.punch }] : [],
      ),
    )
    // The days these punches touch are queued for the attendance engine in the same transaction:
    // a stored punch always reaches its day (docs/decisions/0085-attendance-days-are-a-pure-function.md).
    await attendance.enqueue(
      s.attendanceWork,
      tenant,
      final.flatMap((o) =>
        o.status === 'created'
          ? [{ employeeCode: o.punch.employeeCode, punchedAt: rowsById.get(o.punch.id) ?? 0 }]
          : [],
      ),
    )
    return final
  })
  outbox.committed()
  attendance.committed()
  return stored
}

/** A punch time outside what the tenant takes: ahead of the server clock, or past the backfill window. */
export function punchedAtError(
  at: number,
  now: number,
  tenant: Pick<TenantContext, 'backfillDays'>,
): AppError | undefined {
  if (at > now + MAX_FUTURE_SKEW_SECONDS * 1_000_000) {
    return new AppError(
      'punched_at_in_future',
      `punchedAt is more than ${MAX_FUTURE_SKEW_SECONDS / 60} minutes ahead of the server clock; check the device clock.`,
    )
  }
  if (at < now - tenant.backfillDays * 86_400 * 1_000_000) {
    return new AppError('punched_at_too_old', `punchedAt is more than ${tenant.backfillDays} days ago.`)
  }
  return undefined
}

/**
 * A manual punch (a correction) is taken only where it is expected, with its reason; a reason on
 * any other punch is refused rather than dropped.
 */
export function manualPunchError(input: PunchInput, manual: boolean): AppError | undefined {
  const isManual = input.source === 'manual'
  const field = (pointer: string, message: string) =>
    new AppError('validation_failed', message, { errors: [{ in: 'body', pointer, message }] })
  if (isManual && !manual)
    return field(
      '#/source',
      'a manual punch is a correction: send it alone to POST /attendance/punches, with a reason',
    )
  if (manual && !isManual) return field('#/source', 'a correction has source manual')
  if (isManual && (input.reason == null || input.reason.trim() === ''))
    return field('#/reason', 'a manual punch needs a reason')
  if (!isManual && input.reason != null) return field('#/reason', 'only a manual punch has a reason')
  return undefined
}

/** Adds each follower's outcome (a duplicate of what its first became, or the same rejection), in index order. */
function withFollowers(
  outcomes: Outcome[],
  followers: { candidate: Candidate; first: Candidate }[],
): Outcome[] {
  const all = [...outcomes]
  if (followers.length > 0) {
    const byIndex = new Map(outcomes.map((o) => [o.index, o]))
    for (const { candidate, first } of followers) {
      const o = byIndex.get(first.index)
      if (!o) throw new Error('follower without an outcome for its first')
      all.push(
        o.status === 'rejected'
          ? { index: candidate.index, status: 'rejected', error: o.error }
          : { index: candidate.index, status: 'duplicate', punch: o.punch },
      )
    }
  }
  return all.sort((a, b) => a.index - b.index)
}
