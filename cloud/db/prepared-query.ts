import type { CompiledQuery, Kysely, Transaction } from 'kysely'
import { PREPARED_MARK } from './named-statements.js'
import type { Database } from './schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/**
 * A query built and compiled once, run with new parameter values: for the statements every request
 * runs (authentication, a single punch's), where Kysely's building and compiling would cost as much
 * as the query. `build` receives placeholder values and must use each exactly once, in the order
 * given; the compiled parameters are checked against them, so a query that does otherwise fails at
 * startup. Compiled once per database, whether run on it or in one of its transactions (they share
 * its adapter, which is what the SQL depends on). On PostgreSQL it is also prepared once per
 * connection (PREPARED_MARK).
 */
export function prepareQuery<Args extends unknown[], Row>(
  build: (db: Executor, ...placeholders: Args) => { compile(): CompiledQuery<Row> },
  placeholders: Args,
) {
  const compiled = new WeakMap<object, CompiledQuery<Row>>()
  return async (db: Executor, ...args: Args): Promise<Row[]> => {
    const adapter = db.getExecutor().adapter
    let query = compiled.get(adapter)
    if (!query) {
      const built = build(db, ...placeholders).compile()
      if (JSON.stringify(built.parameters) !== JSON.stringify(placeholders)) {
        throw new Error(`prepared query does not use its parameters once each, in order: ${built.sql}`)
      }
      // PostgreSQL also prepares it once per connection (named-statements.ts).
      query = { ...built, sql: `${PREPARED_MARK}${built.sql}` }
      compiled.set(adapter, query)
    }
    const result = await db.executeQuery<Row>({ ...query, parameters: args })
    return result.rows
  }
}
