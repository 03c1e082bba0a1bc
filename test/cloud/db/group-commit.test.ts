import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { createTestDatabaseUrl } from '../../support/cloud-harness.js'

/**
 * SQLite's shared transactions: units that arrive together commit together; one that fails rolls
 * back alone, whatever it wrote, and the others commit once each.
 */
describe('group commit (SQLite)', () => {
  let database: DatabaseHandle
  let drop: () => Promise<void>

  beforeAll(async () => {
    const target = await createTestDatabaseUrl('sqlite')
    drop = target.drop
    database = openDatabase(target.url)
    await sql`create table notes (id text primary key, body text not null)`.execute(database.db)
  })
  afterAll(async () => {
    await database?.close()
    await drop?.()
  })

  const notes = async () =>
    (await sql<{ id: string }>`select id from notes order by id`.execute(database.db)).rows.map((r) => r.id)
  const insert = (id: string) => (trx: Parameters<Parameters<DatabaseHandle['transact']>[0]>[0]) =>
    sql`insert into notes (id, body) values (${id}, 'x')`.execute(trx).then(() => id)

  it('commits units that arrive together, each answered with its own value', async () => {
    const ids = ['a1', 'a2', 'a3', 'a4']
    expect(await Promise.all(ids.map((id) => database.transact(insert(id))))).toEqual(ids)
    expect(await notes()).toEqual(ids)
  })

  it('rolls back the one unit that fails, with what it wrote, and commits the others once', async () => {
    const runs = new Map<string, number>()
    const counted = (id: string) => async (trx: Parameters<ReturnType<typeof insert>>[0]) => {
      runs.set(id, (runs.get(id) ?? 0) + 1)
      return insert(id)(trx)
    }
    const outcomes = await Promise.allSettled([
      database.transact(counted('b1')),
      database.transact(async (trx) => {
        await insert('b-failing')(trx)
        throw new Error('this unit fails after writing')
      }),
      database.transact(counted('b2')),
      // A unit that breaks a constraint fails in the database, not in its own code.
      database.transact(insert('a1')),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected'])
    expect((outcomes[1] as PromiseRejectedResult).reason).toHaveProperty(
      'message',
      'this unit fails after writing',
    )
    expect(String((outcomes[3] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/)
    expect(await notes()).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2'])
    // The first try rolled back, so the others ran again: a unit of work may (unit-of-work.ts).
    expect(runs.get('b1')).toBe(2)
  })

  it('rolls back a unit alone in its transaction that fails', async () => {
    await expect(
      database.transact(async (trx) => {
        await insert('c-alone')(trx)
        throw new Error('alone and failing')
      }),
    ).rejects.toThrow('alone and failing')
    expect(await notes()).not.toContain('c-alone')
  })
})
