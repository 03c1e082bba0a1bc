import { type Kysely, sql } from 'kysely'
import type { Database } from './schema.js'

/** Resolves when the database answers a query; rejects with the driver's error when it does not. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db)
}
