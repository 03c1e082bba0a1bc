/**
 * What one request changed in the database, row by row, for the fuzz of stored records (no
 * input may leave a malformed record stored). A full copy of every table is kept and
 * compared only when a cheap fingerprint says something was written: SQLite's total_changes() on
 * the app's one connection, or PostgreSQL's row count and newest row version (xmin) per table.
 */
import { type Kysely, sql } from 'kysely'
import type { DatabaseHandle } from '../../cloud/db/database.js'
import type { Database } from '../../cloud/db/schema.js'

type Row = Record<string, unknown>
export type TableName = keyof Database

/** Each table's primary key (cloud/db/migrations): what tells a changed row from a new one. */
export const PRIMARY_KEYS: Record<TableName, readonly string[]> = {
  tenants: ['id'],
  console_users: ['id'],
  employees: ['id'],
  punches: ['id'],
  idempotency_keys: ['tenant_id', 'idempotency_key'],
  api_keys: ['id'],
  oauth_apps: ['id'],
  oauth_client_secrets: ['id'],
  oauth_tokens: ['id'],
  audit_log: ['id'],
  webhook_endpoints: ['id'],
  webhook_secrets: ['id'],
  webhook_events: ['id'],
  webhook_deliveries: ['id'],
  webhook_attempts: ['id'],
  admin_tokens: ['id'],
  console_sessions: ['token_hash'],
  console_sign_in_failures: ['key'],
  attendance_shifts: ['tenant_id', 'code'],
  attendance_policies: ['id'],
  attendance_assignments: ['id'],
  attendance_holidays: ['id'],
  attendance_days: ['id'],
  attendance_dirty: ['tenant_id', 'employee_code', 'local_date'],
  punch_corrections: ['tenant_id', 'punch_id', 'kind'],
  attendance_jobs: ['id'],
  attendance_calendar: ['tenant_id'],
  attendance_locks: ['tenant_id', 'from_date', 'to_date'],
}

export const TABLES = Object.keys(PRIMARY_KEYS) as TableName[]

export interface RowChange {
  table: TableName
  kind: 'added' | 'removed' | 'changed'
  /** The row after the change (before, for a removal). */
  row: Row
  /** For a changed row: the columns whose value changed. */
  columns: string[]
}

type Snapshot = Map<TableName, Map<string, Row>>

export class DatabaseChanges {
  private snapshot: Snapshot = new Map()
  private fingerprint = ''

  constructor(private readonly database: DatabaseHandle) {}

  private get db(): Kysely<Database> {
    return this.database.db
  }

  private async currentFingerprint(): Promise<string> {
    if (this.database.dialect === 'sqlite') {
      const { rows } = await sql<{ n: number }>`select total_changes() as n`.execute(this.db)
      return String(rows[0]?.n)
    }
    const parts = TABLES.map(
      (t) =>
        sql`select ${sql.lit(t)}::text as t, count(*)::text as n, coalesce(max(xmin::text::bigint), 0)::text as x from ${sql.table(t)}`,
    )
    const { rows } = await sql<{
      t: string
      n: string
      x: string
    }>`${sql.join(parts, sql` union all `)}`.execute(this.db)
    return rows.map((r) => `${r.t}:${r.n}:${r.x}`).join(',')
  }

  private async takeSnapshot(): Promise<Snapshot> {
    const out: Snapshot = new Map()
    for (const table of TABLES) {
      const rows = (await this.db.selectFrom(table).selectAll().execute()) as Row[]
      const keyed = new Map<string, Row>()
      for (const row of rows) keyed.set(PRIMARY_KEYS[table].map((k) => String(row[k])).join('\u0001'), row)
      out.set(table, keyed)
    }
    return out
  }

  /** Starts (or restarts) from the database as it is now. */
  async reset(): Promise<void> {
    this.fingerprint = await this.currentFingerprint()
    this.snapshot = await this.takeSnapshot()
  }

  /** Every row added, removed or changed since the last call (or reset). */
  async changes(): Promise<RowChange[]> {
    const fingerprint = await this.currentFingerprint()
    if (fingerprint === this.fingerprint) return []
    const next = await this.takeSnapshot()
    const out: RowChange[] = []
    for (const table of TABLES) {
      const before = this.snapshot.get(table) ?? new Map<string, Row>()
      const after = next.get(table) ?? new Map<string, Row>()
      for (const [key, row] of after) {
        const old = before.get(key)
        if (!old) out.push({ table, kind: 'added', row, columns: Object.keys(row) })
        else {
          const columns = Object.keys(row).filter((c) => !sameValue(old[c], row[c]))
          if (columns.length > 0) out.push({ table, kind: 'changed', row, columns })
        }
      }
      for (const [key, row] of before)
        if (!after.has(key)) out.push({ table, kind: 'removed', row, columns: [] })
    }
    this.snapshot = next
    this.fingerprint = fingerprint
    return out
  }

  /** Every row of every table, for a last look at all that is stored. */
  async allRows(): Promise<{ table: TableName; row: Row }[]> {
    const snapshot = await this.takeSnapshot()
    return TABLES.flatMap((table) =>
      [...(snapshot.get(table)?.values() ?? [])].map((row) => ({ table, row })),
    )
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b)
  return a === b
}
