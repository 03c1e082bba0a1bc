/**
 * What holds between stored rows, for fuzz-stored-records.test.ts (no input may
 * leave a malformed record stored): a row can be well formed on its own (stored-row-checks.ts) and still be
 * wrong next to the others.
 */
import type { TableName } from './database-changes.js'

type Row = Record<string, unknown>

/** A reference from a column of one table to the id of another: both rows of one tenant. */
const REFERENCES: { from: TableName; column: string; to: TableName; same?: [string, string][] }[] = [
  { from: 'employees', column: 'tenant_id', to: 'tenants' },
  {
    from: 'punches',
    column: 'employee_id',
    to: 'employees',
    // The code a punch shows is its employee's.
    same: [['employee_code', 'employee_code']],
  },
  { from: 'console_users', column: 'tenant_id', to: 'tenants' },
  { from: 'oauth_client_secrets', column: 'app_id', to: 'oauth_apps' },
  { from: 'oauth_tokens', column: 'app_id', to: 'oauth_apps' },
  { from: 'webhook_secrets', column: 'endpoint_id', to: 'webhook_endpoints' },
  { from: 'webhook_events', column: 'endpoint_id', to: 'webhook_endpoints' },
  { from: 'webhook_deliveries', column: 'endpoint_id', to: 'webhook_endpoints' },
  { from: 'webhook_deliveries', column: 'event_id', to: 'webhook_events', same: [['event_type', 'type']] },
  { from: 'webhook_attempts', column: 'delivery_id', to: 'webhook_deliveries' },
  { from: 'console_sessions', column: 'user_id', to: 'console_users' },
]

/**
 * What holds between rows (docs/decisions/0005-tenant-from-credential.md): every reference stays within its
 * tenant (a foreign key alone would let a punch name another tenant's employee), a punch shows its employee's
 * code, a delivery its event's type and as many attempts as it has rows; a tenant's employees each have an
 * updatedAt of their own, none after the tenant's change clock ("make updatedAt strictly increasing
 * per tenant").
 */
export function crossRowProblems(rows: readonly { table: TableName; row: Row }[]): string[] {
  const byId = new Map<TableName, Map<string, Row>>()
  const of = (table: TableName) => rows.filter((r) => r.table === table).map((r) => r.row)
  for (const { table, row } of rows) {
    if (typeof row.id !== 'string') continue
    const ids = byId.get(table) ?? new Map<string, Row>()
    ids.set(row.id, row)
    byId.set(table, ids)
  }
  const problems: string[] = []
  for (const ref of REFERENCES) {
    for (const row of of(ref.from)) {
      const target = row[ref.column]
      if (target === null) continue
      const found = byId.get(ref.to)?.get(String(target))
      const where = `${ref.from} ${String(row.id ?? row.token_hash)}.${ref.column} → ${ref.to} ${String(target)}`
      if (!found) problems.push(`${where}: not there`)
      else if (ref.to !== 'tenants' && found.tenant_id !== row.tenant_id)
        problems.push(`${where}: another tenant's`)
      else
        for (const [mine, theirs] of ref.same ?? []) {
          if (row[mine] !== found[theirs])
            problems.push(`${where}: ${mine} ${String(row[mine])} ≠ ${String(found[theirs])}`)
        }
    }
  }
  const attempts = new Map<string, number>()
  for (const a of of('webhook_attempts'))
    attempts.set(String(a.delivery_id), (attempts.get(String(a.delivery_id)) ?? 0) + 1)
  for (const d of of('webhook_deliveries')) {
    if (d.attempts !== (attempts.get(String(d.id)) ?? 0)) {
      problems.push(
        `webhook_deliveries ${String(d.id)}: attempts ${String(d.attempts)}, attempt rows ${attempts.get(String(d.id)) ?? 0}`,
      )
    }
  }
  const clocks = new Map(of('tenants').map((t) => [t.id, t.last_change_us as number]))
  const seen = new Map<string, string>()
  for (const e of of('employees')) {
    const key = `${String(e.tenant_id)} ${String(e.updated_at)}`
    const other = seen.get(key)
    if (other) problems.push(`employees ${String(e.id)} and ${other}: the same updated_at in one tenant`)
    seen.set(key, String(e.id))
    if ((e.updated_at as number) > (clocks.get(e.tenant_id as string) ?? Number.NEGATIVE_INFINITY)) {
      problems.push(`employees ${String(e.id)}: updated_at after its tenant's change clock`)
    }
  }
  return problems
}
