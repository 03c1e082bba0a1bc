import type { Kysely, Transaction } from 'kysely'
import type { Database } from './schema.js'

/**
 * What runs a query: the database, or a transaction on it. Stores are built on one (cloud/stores.ts);
 * nothing above the stores sees it (docs/decisions/0083-unit-of-work.md).
 */
export type Executor = Kysely<Database> | Transaction<Database>
