import { type Kysely, PostgresAdapter, sql } from 'kysely'

// Indexes for the console API's employee search (docs/decisions/0048-employee-prefix-search.md) and
// dashboard.
//
// Search is by the start of an employee's code, name or email, ignoring the case of A–Z: the store
// compares lower(column) with a range, which these expression indexes serve. SQLite's lower() folds
// A–Z only and compares bytes; on PostgreSQL the columns get the "C" collation, whose lower() also
// folds A–Z only and which compares bytes, so that one query finds the same rows on both. Equality,
// and so the unique (tenant_id, employee_code), means the same under either collation.

const SEARCHED = ['employee_code', 'name', 'email'] as const

export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      alter table employees
        alter column employee_code type text collate "C",
        alter column name type text collate "C",
        alter column email type text collate "C"`.execute(db)
  }
  for (const column of SEARCHED) {
    await sql`create index ${sql.raw(`employees_search_${column}`)}
      on employees (tenant_id, lower(${sql.raw(column)}))`.execute(db)
  }
  // The dashboard counts a tenant's deliveries by day and status: a range of this index, and all it reads.
  await db.schema
    .createIndex('webhook_deliveries_tenant_created')
    .on('webhook_deliveries')
    .columns(['tenant_id', 'created_at', 'status'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_tenant_created').execute()
  for (const column of SEARCHED) await db.schema.dropIndex(`employees_search_${column}`).execute()
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      alter table employees
        alter column employee_code type text collate "default",
        alter column name type text collate "default",
        alter column email type text collate "default"`.execute(db)
  }
}
