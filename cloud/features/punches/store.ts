import { PostgresAdapter, sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import { type LiveCredentialAt, liveCredential, prepareForCachedCaller } from '../../db/live-credential.js'
import { PREPARED_MARK } from '../../db/named-statements.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { AttendanceDirtyTable, PunchesTable, WebhookEventsTable } from '../../db/schema.js'

export type PunchRow = PunchesTable

export interface PunchListFilter {
  employeeCode?: string
  /** µs, inclusive. */
  from?: number
  /** µs, exclusive. */
  to?: number
  after?: { punchedAt: number; id: string }
  limit: number
  /**
   * A cached caller the same statement checks: no rows unless its credential is still live
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  liveCredential?: LiveCredentialAt
}

const CHUNK = 500

// A single punch on SQLite (PostgreSQL has its one statement): built and compiled once (see prepareQuery).
const insertOne = prepareQuery(
  (
    db,
    id: string,
    tenantId: string,
    employeeId: string,
    employeeCode: string,
    punchType: string,
    punchedAt: number,
    receivedAt: number,
    deviceId: string | null,
    source: string | null,
    externalId: string | null,
    fingerprint: string,
  ) =>
    db
      .insertInto('punches')
      .values({
        id,
        tenant_id: tenantId,
        employee_id: employeeId,
        employee_code: employeeCode,
        punch_type: punchType,
        punched_at: punchedAt,
        received_at: receivedAt,
        device_id: deviceId,
        source,
        external_id: externalId,
        fingerprint,
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'external_id']).doNothing())
      .returning('id'),
  [
    'id',
    'tenant_id',
    'employee_id',
    'employee_code',
    'punch_type',
    -1,
    -2,
    'device_id',
    'source',
    'external_id',
    'fingerprint',
  ],
)

type NewPunch = [
  id: string,
  punchType: string,
  punchedAt: number,
  receivedAt: number,
  deviceId: string | null,
  source: string | null,
  externalId: string | null,
  fingerprint: string,
  tenantId: string,
  employeeCode: string,
]

// Placeholders in the order the statements below use them (see prepareQuery).
const NEW_PUNCH: NewPunch = [
  'id',
  'punch_type',
  -1,
  -2,
  'device_id',
  'source',
  'external_id',
  'fingerprint',
  'tenant_id',
  'employee_code',
]

/**
 * SQLite's single punch (PostgreSQL's is insertNew's one statement): inserted from its employee's
 * row, so only for an active employee of the tenant, and, with a cached caller, only while that
 * credential is live.
 */
function newPunchFromEmployee(db: Executor, punch: NewPunch, cached?: LiveCredentialAt) {
  const [
    id,
    punchType,
    punchedAt,
    receivedAt,
    deviceId,
    source,
    externalId,
    fingerprint,
    tenantId,
    employeeCode,
  ] = punch
  const live = cached ? sql`and exists (${liveCredential(sql.ref('e.tenant_id'), cached)})` : sql``
  // SQLite would read an ON CONFLICT after a SELECT with no WHERE as part of a join: this one has one.
  const query = sql<{ id: string }>`
    insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at,
      received_at, device_id, source, external_id, fingerprint)
    select ${id}, e.tenant_id, e.id, e.employee_code, ${punchType}, ${punchedAt}, ${receivedAt},
      ${deviceId}, ${source}, ${externalId}, ${fingerprint}
    from employees e
    where e.tenant_id = ${tenantId} and e.employee_code = ${employeeCode} and e.status = 'ACTIVE' ${live}
    on conflict (tenant_id, external_id) do nothing
    returning id`
  return { compile: () => query.compile(db) }
}

// Built and compiled once each (see prepareQuery): for a caller looked up on this request, and for a
// cached one of either kind.
const insertNewFromEmployee = prepareQuery(
  (db, ...punch: NewPunch) => newPunchFromEmployee(db, punch),
  NEW_PUNCH,
)
const insertNewFromEmployeeIfLive = prepareForCachedCaller(
  (db, caller, ...punch: NewPunch) => newPunchFromEmployee(db, punch, caller),
  NEW_PUNCH,
)

export class PunchStore {
  constructor(private readonly db: Executor) {}

  async get(tenantId: string, id: string): Promise<PunchRow | undefined> {
    return this.db
      .selectFrom('punches')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async findByExternalIds(tenantId: string, externalIds: readonly string[]): Promise<PunchRow[]> {
    const rows: PunchRow[] = []
    for (let i = 0; i < externalIds.length; i += CHUNK) {
      rows.push(
        ...(await this.db
          .selectFrom('punches')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('external_id', 'in', externalIds.slice(i, i + CHUNK))
          .execute()),
      )
    }
    return rows
  }

  /**
   * Inserts punches; one whose externalId is already stored (a concurrent retry won the race) is
   * skipped, not an error. Returns the ids actually inserted.
   */
  async insertMany(tenantId: string, rows: readonly Omit<PunchRow, 'tenant_id'>[]): Promise<Set<string>> {
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) return this.insertUnnested(tenantId, rows)
    const [r] = rows
    if (rows.length === 1 && r) {
      const result = await insertOne(
        this.db,
        r.id,
        tenantId,
        r.employee_id,
        r.employee_code,
        r.punch_type,
        r.punched_at,
        r.received_at,
        r.device_id,
        r.source,
        r.external_id,
        r.fingerprint,
      )
      return new Set(result.map(({ id }) => id))
    }
    const inserted = new Set<string>()
    for (let i = 0; i < rows.length; i += CHUNK) {
      const result = await this.db
        .insertInto('punches')
        .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, tenant_id: tenantId })))
        .onConflict((oc) => oc.columns(['tenant_id', 'external_id']).doNothing())
        .returning('id')
        .execute()
      for (const { id } of result) inserted.add(id)
    }
    return inserted
  }

  /**
   * PostgreSQL: the rows go in as one array per column, unnested into one INSERT. A multi-row VALUES
   * list sends 11 parameters a punch (5,500 for a batch of 500), each bound and type-checked
   * alone; eleven arrays cost PostgreSQL and the driver far less, and the statement's text is the
   * same whatever the batch size. The statement is not given a name: its best plan depends on the
   * arrays' length, and a generic plan for one length is slow for another.
   */
  private async insertUnnested(
    tenantId: string,
    rows: readonly Omit<PunchRow, 'tenant_id'>[],
  ): Promise<Set<string>> {
    if (rows.length === 0) return new Set()
    const column = <K extends keyof Omit<PunchRow, 'tenant_id'>>(key: K) => rows.map((r) => r[key])
    const result = await sql<{ id: string }>`
      insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at,
        received_at, device_id, source, external_id, fingerprint)
      select r.id, ${tenantId}, r.employee_id, r.employee_code, r.punch_type, r.punched_at,
        r.received_at, r.device_id, r.source, r.external_id, r.fingerprint
      from unnest(${column('id')}::text[], ${column('employee_id')}::text[],
        ${column('employee_code')}::text[], ${column('punch_type')}::text[],
        ${column('punched_at')}::bigint[], ${column('received_at')}::bigint[],
        ${column('device_id')}::text[], ${column('source')}::text[], ${column('external_id')}::text[],
        ${column('fingerprint')}::text[])
        as r(id, employee_id, employee_code, punch_type, punched_at, received_at, device_id, source,
          external_id, fingerprint)
      on conflict (tenant_id, external_id) do nothing
      returning id`.execute(this.db)
    return new Set(result.rows.map((r) => r.id))
  }

  /**
   * Whether `insertNew` applies here (PostgreSQL). On SQLite, whose statements cost no round trips,
   * the caller's transaction runs `insertNewFromEmployee` and writes the event and the day itself.
   */
  insertsInOneStatement(): boolean {
    return this.db.getExecutor().adapter instanceof PostgresAdapter
  }

  /**
   * SQLite's single punch, run in the caller's transaction: the punch inserted from its employee's
   * row, so only if the employee is active in the tenant, and only if its externalId is not stored
   * yet; with `credential` (the caller's came from the cache), only if that credential is still
   * live at `now` and its tenant's settings are unchanged, as insertNew checks it
   * (docs/decisions/0093-sqlite-single-punch-checks-its-credential.md). True when inserted; false
   * when not, and the caller's full path says why. Reading the employee and the credential in the
   * statement that writes means they are read under the write lock: nothing commits between them.
   */
  async insertNewFromEmployee(
    tenantId: string,
    row: Omit<PunchRow, 'tenant_id' | 'employee_id'>,
    credential?: LiveCredentialAt,
  ): Promise<boolean> {
    const punch: NewPunch = [
      row.id,
      row.punch_type,
      row.punched_at,
      row.received_at,
      row.device_id,
      row.source,
      row.external_id,
      row.fingerprint,
      tenantId,
      row.employee_code,
    ]
    const inserted = credential
      ? await insertNewFromEmployeeIfLive(this.db, credential, ...punch)
      : await insertNewFromEmployee(this.db, ...punch)
    return inserted.length === 1
  }

  /**
   * PostgreSQL only (undefined on SQLite, whose transactions cost no round trips): one new punch,
   * its outbox event and the day it touches, written by one statement, prepared once per connection,
   * so one round trip and one commit (a statement commits alone, and is atomic: all three rows or
   * none). The punch is written only if its employee is active and its externalId is not stored
   * yet; otherwise nothing is, and the answer is false: the caller's full path then says why (a
   * retry, a reused externalId, an employee not found or not active). The employee is read in the
   * statement, scoped to the tenant like every part of it
   * (docs/decisions/0090-postgresql-hot-paths-in-one-statement.md). With `credential`, the caller's
   * credential came from the cache, and the statement writes only if it is still live at `now` and
   * its tenant's settings are unchanged (docs/decisions/0091-credential-cache-checked-by-the-write.md).
   */
  async insertNew(
    tenantId: string,
    row: Omit<PunchRow, 'tenant_id' | 'employee_id'>,
    event: WebhookEventsTable,
    day: Omit<AttendanceDirtyTable, 'tenant_id'> | undefined,
    credential?: LiveCredentialAt,
  ): Promise<boolean | undefined> {
    if (!this.insertsInOneStatement()) return undefined
    // Parameters in a SELECT list have no type of their own: the casts give them the columns'.
    const queueDay = day
      ? sql`, day as (
          insert into attendance_dirty (tenant_id, employee_code, local_date, queued_at)
          select ${tenantId}, ${day.employee_code}, ${day.local_date}, ${day.queued_at}::bigint from punch
          on conflict (tenant_id, employee_code, local_date) do update set queued_at = excluded.queued_at
        )`
      : sql``
    const live = credential ? liveCredential(tenantId, credential) : undefined
    const result = await sql<{ inserted: number }>`${sql.raw(PREPARED_MARK)}
      with ${live ? sql`cred as (${live}), ` : sql``}employee as (
        select id from employees
        where tenant_id = ${tenantId} and employee_code = ${row.employee_code} and status = 'ACTIVE'
          ${live ? sql`and exists (select 1 from cred)` : sql``}
      ), punch as (
        insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at,
          received_at, device_id, source, external_id, fingerprint)
        select ${row.id}, ${tenantId}, employee.id, ${row.employee_code}, ${row.punch_type},
          ${row.punched_at}::bigint, ${row.received_at}::bigint, ${row.device_id}::text,
          ${row.source}::text, ${row.external_id}::text, ${row.fingerprint}
        from employee
        on conflict (tenant_id, external_id) do nothing
        returning id
      ), event as (
        insert into webhook_events (id, tenant_id, type, body, body_bytes, body_sha256, endpoint_id,
          created_at, fanned_out)
        select ${event.id}, ${tenantId}, ${event.type}, ${event.body}, ${event.body_bytes}::integer,
          ${event.body_sha256}, ${event.endpoint_id}::text, ${event.created_at}::bigint,
          ${event.fanned_out}::integer
        from punch
      )${queueDay}
      select count(*)::integer as inserted from punch`.execute(this.db)
    return result.rows[0]?.inserted === 1
  }

  async list(tenantId: string, filter: PunchListFilter): Promise<PunchRow[]> {
    let q = this.db.selectFrom('punches').selectAll().where('tenant_id', '=', tenantId)
    const caller = filter.liveCredential
    if (caller) q = q.where(sql<boolean>`exists (${liveCredential(tenantId, caller)})`)
    if (filter.employeeCode !== undefined) q = q.where('employee_code', '=', filter.employeeCode)
    if (filter.to !== undefined) q = q.where('punched_at', '<', filter.to)
    const after = filter.after
    // With a cursor, the cursor alone bounds the scan from below (it implies `from`): with a second,
    // scalar bound SQLite seeks from `from` and filters its way to the cursor, so late pages slow down.
    if (after)
      q = q.where((eb) => eb(eb.refTuple('punched_at', 'id'), '>', eb.tuple(after.punchedAt, after.id)))
    else if (filter.from !== undefined) q = q.where('punched_at', '>=', filter.from)
    return q.orderBy('punched_at').orderBy('id').limit(filter.limit).execute()
  }

  /**
   * One employee's punches in [from, to) µs, in no order: what the attendance engine computes days
   * from (it sorts them itself). No ORDER BY on purpose: with one, SQLite without statistics walks
   * the tenant-wide time index (every punch of the tenant in the window) rather than the
   * employee's, and a tenant-wide recompute grows with the square of the tenant's size.
   */
  forEmployee(
    tenantId: string,
    employeeCode: string,
    from: number,
    to: number,
  ): Promise<Pick<PunchRow, 'id' | 'punch_type' | 'punched_at'>[]> {
    return this.db
      .selectFrom('punches')
      .select(['id', 'punch_type', 'punched_at'])
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', employeeCode)
      .where('punched_at', '>=', from)
      .where('punched_at', '<', to)
      .execute()
  }
}
