import type { Kysely, Transaction } from 'kysely'
import { newId } from '../../../shared/ids.js'
import { MAX_FUTURE_SKEW_SECONDS, type Punch, type PunchInput } from '../../../shared/punch.js'
import { formatInZone, formatServerTime, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Database } from '../../db/schema.js'
import { EmployeeStore } from '../employees/store.js'
import type { TenantContext } from '../tenants/tenant-context.js'
import { punchFingerprint } from './punch-fingerprint.js'
import { type PunchRow, PunchStore } from './store.js'

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

export function toPunch(row: Omit<PunchRow, 'tenant_id'>, timeZone: string): Punch {
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
 * within the request and against the log; check the time window; check the employee; insert.
 * `onCommit` runs inside the insert's transaction with the final outcomes (the idempotency record),
 * and only when something is inserted. The punch log is append-only: nothing here updates a punch.
 */
export async function ingestPunches(
  db: Kysely<Database>,
  tenant: TenantContext,
  now: number,
  inputs: readonly IngestInput[],
  onCommit: (trx: Transaction<Database>, outcomes: Outcome[]) => Promise<void>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  const duplicateOf = (c: Candidate, row: Omit<PunchRow, 'tenant_id'>): Outcome =>
    row.fingerprint === c.fingerprint
      ? { index: c.index, status: 'duplicate', punch: toPunch(row, tenant.timeZone) }
      : { index: c.index, status: 'rejected', error: externalIdReused(row.external_id ?? '') }

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

  // 2. Against the log, before the time checks: a retry of a stored punch is a duplicate even after
  //    it has aged out of the backfill window.
  const store = new PunchStore(db)
  const externalIds = [...firstByExternalId.keys()]
  const stored = new Map(
    (externalIds.length > 0 ? await store.findByExternalIds(tenant.id, externalIds) : []).map((r) => [
      r.external_id,
      r,
    ]),
  )
  const fresh: Candidate[] = []
  for (const c of candidates) {
    const row = c.input.externalId == null ? undefined : stored.get(c.input.externalId)
    if (row) outcomes.push(duplicateOf(c, row))
    else fresh.push(c)
  }

  // 3. The time window and the employee.
  const latest = now + MAX_FUTURE_SKEW_SECONDS * 1_000_000
  const earliest = now - tenant.backfillDays * 86_400 * 1_000_000
  const codes = [...new Set(fresh.map((c) => c.input.employeeCode))]
  const employees = new Map(
    (codes.length > 0 ? await new EmployeeStore(db).findByCodes(tenant.id, codes) : []).map((e) => [
      e.employee_code,
      e,
    ]),
  )
  const rows: { row: Omit<PunchRow, 'tenant_id'>; candidate: Candidate }[] = []
  for (const c of fresh) {
    const at = c.punchedAt ?? now
    const employee = employees.get(c.input.employeeCode)
    let error: AppError | undefined
    if (at > latest) {
      error = new AppError(
        'punched_at_in_future',
        `punchedAt is more than ${MAX_FUTURE_SKEW_SECONDS / 60} minutes ahead of the server clock; check the device clock.`,
      )
    } else if (at < earliest) {
      error = new AppError('punched_at_too_old', `punchedAt is more than ${tenant.backfillDays} days ago.`)
    } else if (!employee) {
      error = new AppError('employee_not_found', `No employee with code ${c.input.employeeCode}.`, {
        status: 422,
      })
    } else if (employee.status !== 'ACTIVE') {
      error = new AppError('employee_not_active', `Employee ${c.input.employeeCode} is ${employee.status}.`)
    }
    if (error || !employee) {
      outcomes.push({ index: c.index, status: 'rejected', error: error as AppError })
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

  if (rows.length === 0) return withFollowers(outcomes, followers)

  // 4. Insert, and whatever the caller must record with it, in one transaction.
  return db.transaction().execute(async (trx) => {
    const trxStore = new PunchStore(trx)
    const inserted = await trxStore.insertMany(
      tenant.id,
      rows.map((r) => r.row),
    )
    const done = [...outcomes]
    const lost: Candidate[] = []
    for (const { row, candidate } of rows) {
      if (inserted.has(row.id))
        done.push({ index: candidate.index, status: 'created', punch: toPunch(row, tenant.timeZone) })
      else lost.push(candidate)
    }
    // A concurrent request stored these externalIds after step 2: they are duplicates of its rows.
    if (lost.length > 0) {
      const winners = new Map(
        (
          await trxStore.findByExternalIds(
            tenant.id,
            lost.map((c) => c.input.externalId as string),
          )
        ).map((r) => [r.external_id, r]),
      )
      for (const c of lost) {
        const row = winners.get(c.input.externalId as string)
        if (!row) throw new Error('punch neither inserted nor found by its externalId')
        done.push(duplicateOf(c, row))
      }
    }
    const final = withFollowers(done, followers)
    await onCommit(trx, final)
    return final
  })
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
