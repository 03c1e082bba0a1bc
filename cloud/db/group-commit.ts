import { type Kysely, sql, type Transaction } from 'kysely'
import type { Database } from './schema.js'
import { retryOnConflict } from './transaction-conflict.js'

export type TransactionWork<T> = (trx: Transaction<Database>) => Promise<T>

/** Runs a unit of work in a transaction; resolves once that transaction has committed. */
export type RunInTransaction = <T>(work: TransactionWork<T>) => Promise<T>

interface Unit {
  work: TransactionWork<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown }

/** Most units one transaction carries; more wait for the next. */
const MAX_UNITS_PER_TRANSACTION = 256

/**
 * Shared transactions for SQLite's one connection. Every transaction writes each page it touched
 * to the WAL, and concurrent punches touch the same few pages (the tail of the table and of each
 * index), so units that arrive in the same turn of the event loop share one transaction. This cuts
 * the cost of an insert by about three quarters. Durability is WalSync's concern, not this one's.
 * The units run one after another with no SAVEPOINT between them, since almost none fails; should
 * one fail, that transaction is rolled back and the units run again, each under its own SAVEPOINT,
 * so the one that fails rolls back alone and the others commit (a unit of work may run again:
 * unit-of-work.ts).
 */
class GroupCommit {
  private queue: Unit[] = []
  private scheduled = false

  constructor(private readonly db: Kysely<Database>) {}

  readonly run: RunInTransaction = <T>(work: TransactionWork<T>) =>
    new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (!this.scheduled) {
        this.scheduled = true
        // Let the requests already parsed in this turn of the event loop join the transaction.
        setImmediate(() => void this.flush())
      }
    })

  /**
   * The units in one transaction, with no savepoints; undefined if one of several failed (the
   * transaction rolled back). A unit alone that fails rolls its transaction back, with its error.
   */
  private async together(units: readonly Unit[]): Promise<Outcome[] | undefined> {
    let failed: { error: unknown } | undefined
    try {
      return await this.db.transaction().execute(async (trx) => {
        const results: Outcome[] = []
        for (const unit of units) {
          try {
            results.push({ ok: true, value: await unit.work(trx) })
          } catch (error) {
            failed = { error }
            throw error
          }
        }
        return results
      })
    } catch (err) {
      // Not a unit's failure: the transaction itself failed, and none of its units happened.
      if (!failed) throw err
      return units.length === 1 ? [{ ok: false, error: failed.error }] : undefined
    }
  }

  private async flush(): Promise<void> {
    const units = this.queue.splice(0, MAX_UNITS_PER_TRANSACTION)
    try {
      const outcomes =
        (await this.together(units)) ??
        (await this.db.transaction().execute(async (trx) => {
          const results: Outcome[] = []
          for (const unit of units) results.push(await inSavepoint(unit, trx))
          return results
        }))
      outcomes.forEach((outcome, i) => {
        const unit = units[i] as Unit
        if (outcome.ok) unit.resolve(outcome.value)
        else unit.reject(outcome.error)
      })
    } catch (err) {
      // The transaction as a whole failed: none of its units happened.
      for (const unit of units) unit.reject(err)
    } finally {
      if (this.queue.length > 0) setImmediate(() => void this.flush())
      else this.scheduled = false
    }
  }
}

async function inSavepoint(unit: Unit, trx: Transaction<Database>): Promise<Outcome> {
  await sql`savepoint unit`.execute(trx)
  try {
    const value = await unit.work(trx)
    await sql`release savepoint unit`.execute(trx)
    return { ok: true, value }
  } catch (error) {
    await sql`rollback to savepoint unit`.execute(trx)
    await sql`release savepoint unit`.execute(trx)
    return { ok: false, error }
  }
}

/**
 * Write transactions for a database: shared on SQLite, one per unit on PostgreSQL, which has many
 * connections. There a unit that loses a deadlock or a serialization race is run again, a bounded
 * number of times (retryOnConflict), so a unit of work must not act outside the database before it
 * returns. SQLite has one writer: nothing to retry.
 */
export function transactionRunner(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): RunInTransaction {
  if (dialect === 'sqlite') return new GroupCommit(db).run
  return (work) => retryOnConflict(() => db.transaction().execute(work))
}
