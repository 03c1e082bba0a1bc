import { newId } from '../../../shared/ids.js'
import type { PunchInput } from '../../../shared/punch.js'
import { parseTimestamp } from '../../../shared/time.js'
import type { LiveCredentialCheck } from '../../auth/auth-context.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AttendanceQueue } from '../attendance/attendance-queue.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import { type IngestStores, manualPunchError, type Outcome, punchedAtError, toPunch } from './ingest.js'
import { punchFingerprint } from './punch-fingerprint.js'

/**
 * The first try of a single punch sent without an Idempotency-Key, the common case: stored with its
 * event and its day without the employee lookup and the general machinery of `ingestPunches`. On
 * PostgreSQL that is one statement (PunchStore.insertNew), rather than a transaction of five round
 * trips; on SQLite, the punch inserted from its employee's row, then its event and day, in one unit
 * of the shared transaction (PunchStore.insertNewFromEmployee). It answers only for a punch it
 * stored. Anything else (a time out of range, a correction, an employee not found or not active, an
 * externalId already stored) is undefined, and `ingestPunches` answers it, as it would have anyway:
 * the promises are the same (a punch stored once per externalId, with its event, and durable when
 * the response is sent), since the punch, its event and its day are written together or not at all.
 * With `credential` (the caller's came from the cache) the write also checks it is still live, and
 * writes nothing if not: the caller then looks it up before anything else
 * (docs/decisions/0091-credential-cache-checked-by-the-write.md,
 * docs/decisions/0093-sqlite-single-punch-checks-its-credential.md).
 */
export async function insertNewPunch(
  deps: { stores: UnitOfWork<IngestStores>; outbox: WebhookOutbox; attendance: AttendanceQueue },
  tenant: TenantContext,
  now: number,
  input: PunchInput,
  credential?: LiveCredentialCheck,
): Promise<Outcome | undefined> {
  const punchedAt = input.punchedAt == null ? null : (parseTimestamp(input.punchedAt) ?? null)
  const at = punchedAt ?? now
  if (manualPunchError(input, false) || punchedAtError(at, now, tenant)) return undefined
  const row = {
    id: newId('punch', Math.floor(now / 1000)),
    employee_code: input.employeeCode,
    punch_type: input.punchType,
    punched_at: at,
    received_at: now,
    device_id: input.deviceId ?? null,
    source: input.source ?? null,
    external_id: input.externalId ?? null,
    fingerprint: punchFingerprint(input, punchedAt),
  }
  const punch = toPunch(row, tenant.timeZone)
  const [event] = deps.outbox.rows(tenant.id, [{ type: 'attendance.punch.created', data: punch }])
  const [day] = deps.attendance.days(tenant, [{ employeeCode: row.employee_code, punchedAt: at }])
  if (!event) return undefined
  const check = credential && { ...credential, now }
  const { punches } = deps.stores.read
  const inserted = punches.insertsInOneStatement()
    ? await punches.insertNew(
        tenant.id,
        row,
        event,
        day && { employee_code: day.employeeCode, local_date: day.localDate, queued_at: now },
        check,
      )
    : await deps.stores.transaction(async (s) => {
        if (!(await s.punches.insertNewFromEmployee(tenant.id, row, check))) return false
        await s.outbox.insertEvents([event])
        if (day) await s.attendanceWork.enqueue(tenant.id, [day], now)
        return true
      })
  if (!inserted) return undefined
  deps.outbox.committed()
  deps.attendance.committed()
  return { index: 0, status: 'created', punch }
}
