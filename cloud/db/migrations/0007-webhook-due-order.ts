import type { Kysely } from 'kysely'

// The dispatcher claims due deliveries oldest first (next_attempt_at, id). An index led by
// status cannot be read in that order for two statuses (pending, failed), so every claim sorted the
// whole backlog: 33 ms a claim on PostgreSQL at 16,000 pending rows, growing with the backlog. Only
// pending and failed deliveries have a next_attempt_at, so an index on it alone serves the query in
// order. The old one is dropped, not kept beside it: SQLite's planner kept choosing it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due').execute()
  await db.schema
    .createIndex('webhook_deliveries_due_order')
    .on('webhook_deliveries')
    .columns(['next_attempt_at', 'id'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_due_order').execute()
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
}
