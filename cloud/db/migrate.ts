import { type Kysely, type MigrationResult, Migrator, PostgresAdapter, sql } from 'kysely'
import { migrations } from './migrations/index.js'
import type { Database } from './schema.js'

class MigrationError extends Error {
  constructor(
    message: string,
    readonly results: MigrationResult[],
    override readonly cause?: unknown,
  ) {
    super(message)
    this.name = 'MigrationError'
  }
}

/**
 * On PostgreSQL, the schema the tables go in (the first of the search_path). Kysely would otherwise
 * look for its migration table in every schema, and take another schema's for ours.
 */
async function migrationTableSchema(db: Kysely<Database>): Promise<string | undefined> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return undefined
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)
  return rows[0]?.schema ?? undefined
}

/**
 * Brings the schema to the latest version. Safe to run from several processes at once: Kysely
 * takes a lock (a PostgreSQL advisory lock, or SQLite's write lock) around the run.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: await migrationTableSchema(db),
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r) => r.status === 'Error')
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed`, results, error)
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
