import type { Kysely, Transaction } from 'kysely'
import type { Database } from './schema.js'

/**
 * What runs a query: the database, or a transaction on it. A module above the stores that must pass a
 * transaction through to a store takes these types rather than the query builder's
 * (docs/development/architecture.md, "Cloud layers").
 */
export type Executor = Kysely<Database> | Transaction<Database>
