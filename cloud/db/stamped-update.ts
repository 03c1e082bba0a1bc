import type { Updateable, UpdateQueryBuilder, UpdateResult } from 'kysely'
import type { Executor } from './executor.js'
import type { Database } from './schema.js'

/** The webhook tables whose rows belong to a tenant and record when each last changed. */
export type StampedTable = 'webhook_endpoints' | 'webhook_deliveries'

/**
 * The UPDATE that sets `changes` on one of a tenant's rows, found by id, and stamps its updated_at
 * with `atMicros`. A store may narrow it further before running it. The table is a value here, which
 * Kysely's types cannot follow inside: the builder is handed back typed for the table named.
 */
export function stampedUpdate<T extends StampedTable>(
  db: Executor,
  table: T,
  tenantId: string,
  id: string,
  changes: Updateable<Database[T]>,
  atMicros: number,
): UpdateQueryBuilder<Database, T, T, UpdateResult> {
  const query = db
    .updateTable(table as StampedTable)
    .set({ ...changes, updated_at: atMicros })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
  return query as unknown as UpdateQueryBuilder<Database, T, T, UpdateResult>
}
