import { type Kysely, sql } from 'kysely'
import type { Database } from '../../cloud/db/schema.js'
import { PRIMARY_KEYS, TABLES } from './database-changes.js'

/**
 * Every value stored in every table of the cloud, as text, in primary-key order: where a leaked
 * secret would show up, and what a refused request must leave as it was. The tables come from the
 * schema's type (TABLES), not from introspection, which on PostgreSQL lists the tables of every
 * schema in the database, those that test files running beside this one create and drop included.
 */
export async function everyStoredValue(db: Kysely<Database>): Promise<string> {
  const dumps: string[] = []
  for (const table of TABLES) {
    const order = sql.join(PRIMARY_KEYS[table].map((column) => sql.ref(column)))
    const { rows } = await sql`select * from ${sql.table(table)} order by ${order}`.execute(db)
    dumps.push(JSON.stringify(rows))
  }
  return dumps.join('\n')
}
