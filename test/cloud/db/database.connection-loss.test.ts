/**
 * Found by the chaos test (test/system/e2e/chaos-postgres.test.ts): `pg_ctl restart -m fast`
 * under load crashed hajri-cloud. PostgreSQL ends every session with FATAL 57P01 ("terminating
 * connection due to administrator command"); a pooled connection that was checked out at that
 * moment but had no statement running (between two statements of a transaction) emits 'error' on
 * its pg Client, and pg-pool listens for that only on idle clients. Unheard, the 'error' event
 * ended the process. Here one connection is held, idle, while PostgreSQL terminates its backend
 * (pg_terminate_backend sends the same FATAL): the process must carry on, the error be reported
 * through onPoolError, the held connection fail its next statement, and the pool serve the next.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/db/database.js'
import { POSTGRES_URL, postgresAvailability } from '../../support/services.js'

const postgres = await postgresAvailability()

describe.skipIf(postgres.skipReason !== undefined)(
  `PostgreSQL connections ended by the server${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    it('survives a connection in use being terminated between statements, and goes on with a fresh one', async () => {
      const reported: Error[] = []
      const database = openDatabase(POSTGRES_URL, { poolSize: 2, onPoolError: (err) => reported.push(err) })
      const uncaught: unknown[] = []
      const onUncaught = (err: unknown) => uncaught.push(err)
      process.on('uncaughtException', onUncaught)
      try {
        const { db } = database
        const next = await db.connection().execute(async (held) => {
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(held)
          const pid = rows[0]?.pid
          // Terminated from another connection of the pool while this one is out and idle.
          await sql`select pg_terminate_backend(${pid})`.execute(db)
          await waitUntil(() => reported.length > 0 || uncaught.length > 0)
          return sql`select 1 as one`.execute(held).then(
            () => 'answered',
            (err: Error) => err.message,
          )
        })
        expect(uncaught, 'an uncaught error (the process would have ended)').toEqual([])
        // The server's FATAL, then (sometimes) the socket's end: "Connection terminated unexpectedly".
        expect(reported.map((err) => (err as Error & { code?: string }).code)).toContain('57P01')
        expect(next).not.toBe('answered')
        // The pool dropped the dead connection: the next statement gets a working one.
        const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db)
        expect(rows).toEqual([{ one: 1 }])
      } finally {
        process.off('uncaughtException', onUncaught)
        await database.close()
      }
    })
  },
)

async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
}
