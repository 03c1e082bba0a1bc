import { type Kysely, type MigrationResult, Migrator } from 'kysely'
import { migrations } from './migrations/index.js'
import type { Database } from './schema.js'

export class MigrationError extends Error {
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
 * Brings the schema to the latest version. Safe to run from several processes at once: Kysely
 * takes a lock (a PostgreSQL advisory lock, or SQLite's write lock) around the run.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  })
  const { error, results = [] } = await migrator.migrateToLatest()
  if (error) {
    const failed = results.find((r) => r.status === 'Error')
    throw new MigrationError(`migration ${failed?.migrationName ?? '(unknown)'} failed`, results, error)
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
