import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { PREPARED_MARK } from '../../../cloud/db/named-statements.js'
import { createTestDatabaseUrl } from '../../support/cloud-harness.js'
import { postgresAvailability } from '../../support/services.js'

const postgres = await postgresAvailability()

/**
 * On PostgreSQL a marked statement is prepared once per connection and run by name after; any other
 * statement is not. One connection in the pool, so every statement here runs on the one whose
 * prepared statements `pg_prepared_statements` lists.
 */
describe.skipIf(postgres.skipReason !== undefined)(
  `named statements on PostgreSQL${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let database: DatabaseHandle
    let drop: () => Promise<void>

    beforeAll(async () => {
      const target = await createTestDatabaseUrl('postgres')
      drop = target.drop
      database = openDatabase(target.url, { poolSize: 1 })
    })
    afterAll(async () => {
      await database?.close()
      await drop?.()
    })

    const prepared = async () =>
      (
        await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(database.db)
      ).rows.map((r) => r.statement)

    it('prepares a marked statement once and runs it by name with new values; leaves others unnamed', async () => {
      const marked = (n: number) =>
        sql<{ doubled: number }>`${sql.raw(PREPARED_MARK)}select ${n}::integer * 2 as doubled`
      for (const n of [1, 2, 3])
        expect((await marked(n).execute(database.db)).rows).toEqual([{ doubled: n * 2 }])
      await sql`select ${4}::integer * 2 as plain`.execute(database.db)
      const statements = await prepared()
      expect(statements.filter((s) => s.startsWith(PREPARED_MARK))).toEqual([
        `${PREPARED_MARK}select $1::integer * 2 as doubled`,
      ])
      expect(statements.some((s) => s.includes('as plain'))).toBe(false)
    })

    it('runs a marked statement that fails as an error, and the connection goes on serving', async () => {
      const failing = sql`${sql.raw(PREPARED_MARK)}select 1 / ${0}::integer as never`
      await expect(failing.execute(database.db)).rejects.toThrow(/division by zero/)
      expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }])
    })
  },
)
