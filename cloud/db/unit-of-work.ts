import type { Executor } from './executor.js'
import type { RunInTransaction } from './group-commit.js'

/**
 * How a service reaches its stores (docs/development/architecture.md#cloud-layers): `read` for work
 * outside a transaction, and `transaction` for work that must commit as one, with every store bound
 * to that transaction. A service names only the stores it uses (`UnitOfWork<{ tenants: …; audit: … }>`),
 * and never sees the query builder or a transaction object.
 */
export interface UnitOfWork<S> {
  /** Stores on the database itself: each query runs on its own. */
  readonly read: S
  /**
   * Runs `work` in one transaction, with stores bound to it, and resolves once it has committed.
   * `work` may be run again (group-commit.ts): on PostgreSQL when it loses a deadlock or a
   * serialization race, on SQLite when another unit of its shared transaction fails. So it must not
   * act outside the database before it returns.
   */
  transaction<T>(work: (stores: S) => Promise<T>): Promise<T>
}

/** A unit of work over the stores `storesFor` builds on a database or a transaction. */
export function unitOfWork<S>(
  db: Executor,
  transact: RunInTransaction,
  storesFor: (executor: Executor) => S,
): UnitOfWork<S> {
  return {
    read: storesFor(db),
    transaction: (work) => transact((trx) => work(storesFor(trx))),
  }
}
