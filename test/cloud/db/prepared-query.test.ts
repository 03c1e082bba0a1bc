import { afterAll, beforeAll, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { prepareQuery } from '../../../cloud/db/prepared-query.js'

const database = openDatabase('sqlite::memory:')

beforeAll(async () => {
  await migrateToLatest(database.db)
})
afterAll(() => database.close())

it('builds a query once for its database and every transaction on it', async () => {
  let builds = 0
  const find = prepareQuery(
    (db, id: string) => {
      builds++
      return db.selectFrom('tenants').select('id').where('id', '=', id)
    },
    ['id'],
  )
  expect(await find(database.db, 'none')).toEqual([])
  for (let i = 0; i < 2; i++) {
    await database.db.transaction().execute(async (tx) => {
      expect(await find(tx, `none-${i}`)).toEqual([])
    })
  }
  expect(builds).toBe(1)
})

it('refuses a query that does not use its parameters once each, in order', async () => {
  const swapped = prepareQuery(
    (db, a: string, b: string) =>
      db.selectFrom('tenants').select('id').where('name', '=', b).where('id', '=', a),
    ['a', 'b'],
  )
  await expect(swapped(database.db, 'x', 'y')).rejects.toThrow(/once each, in order/)
})
