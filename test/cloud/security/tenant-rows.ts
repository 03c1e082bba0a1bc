/**
 * Everything a tenant owns, read straight from the database (OWASP API1:2023): every table
 * with a tenant_id column, found in the schema itself, so a table added later is covered without
 * touching this file. Compared before and after another tenant's attempts, it shows that nothing of
 * the tenant changed; its ids, codes and emails are what no other tenant's answer may contain.
 */
import { sql } from 'kysely'
import type { TestCloud } from '../../support/cloud-harness.js'

export type TenantRows = Record<string, Record<string, unknown>[]>

async function tenantTables(cloud: TestCloud): Promise<string[]> {
  const db = cloud.database.db
  const rows =
    cloud.database.dialect === 'sqlite'
      ? await sql<{ name: string }>`
          select m.name as name from sqlite_master m join pragma_table_info(m.name) c
          where m.type = 'table' and c.name = 'tenant_id' order by m.name`.execute(db)
      : await sql<{ name: string }>`
          select table_name as name from information_schema.columns
          where table_schema = current_schema() and column_name = 'tenant_id' order by table_name`.execute(db)
  return rows.rows.map((r) => r.name)
}

/** Every row of every tenant-owned table, and the tenant's own row, in a stable order. */
export async function tenantRows(cloud: TestCloud, tenantId: string): Promise<TenantRows> {
  const db = cloud.database.db
  const tables = await tenantTables(cloud)
  if (!tables.includes('employees') || !tables.includes('api_keys')) {
    throw new Error(`the tenant-owned tables were not found: ${tables.join(', ')}`)
  }
  const out: TenantRows = {}
  const sorted = (rows: Record<string, unknown>[]) =>
    rows
      .map((row) => ({ row, key: JSON.stringify(row) }))
      .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
      .map(({ row }) => row)
  for (const table of tables) {
    const result = await sql<Record<string, unknown>>`
      select * from ${sql.table(table)} where tenant_id = ${tenantId}`.execute(db)
    out[table] = sorted(result.rows)
  }
  out.tenants = (
    await sql<Record<string, unknown>>`select * from tenants where id = ${tenantId}`.execute(db)
  ).rows
  return out
}

/** Columns whose values name one tenant's things: ids, codes, emails, URLs, key prefixes. */
const MARKER_COLUMNS = new Set(['employee_code', 'email', 'client_id', 'key_prefix', 'secret_prefix', 'url'])
/** Columns ending in _id whose values tests reuse across tenants (device names, client-chosen ids). */
const NOT_MARKERS = new Set(['device_id', 'external_id', 'idempotency_key'])

/**
 * The strings that identify a tenant's data: every id in its rows, its employees' codes and emails,
 * its webhook URLs, the prefixes of its keys, and its own id. Short values are left out: they could
 * occur anywhere by chance.
 */
export function markersOf(rows: TenantRows, tenantId: string): Set<string> {
  const markers = new Set<string>([tenantId])
  for (const table of Object.values(rows)) {
    for (const row of table) {
      for (const [column, value] of Object.entries(row)) {
        if (typeof value !== 'string' || value.length < 8 || NOT_MARKERS.has(column)) continue
        if (column === 'id' || column.endsWith('_id') || MARKER_COLUMNS.has(column)) markers.add(value)
      }
    }
  }
  return markers
}

/**
 * The markers an answer shows, in its body or its headers (a Location header, say), leaving out
 * those the caller sent itself: echoing a caller's own words back ("No punch pun_...") reveals nothing.
 */
export function leakedMarkers(
  markers: ReadonlySet<string>,
  answer: { body: string; headers: Record<string, unknown> },
  sent: string,
): string[] {
  const text = `${answer.body}\n${JSON.stringify(answer.headers)}`
  return [...markers].filter((m) => text.includes(m) && !sent.includes(m))
}
