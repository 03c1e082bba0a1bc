/**
 * Migrating one schema while other schemas of the same PostgreSQL database come and go: several
 * deployments (or test runs) share a database, one schema each. The migration must look at its
 * own schema only; a catalog-wide look fails when a table it lists is dropped before it is read.
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { createTestDatabaseUrl } from '../../support/cloud-harness.js'
import { POSTGRES_URL, postgresAvailability } from '../../support/services.js'

const postgres = await postgresAvailability()

describe.skipIf(postgres.skipReason !== undefined)(
  `migrations beside schemas that come and go [postgres]${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL })
    beforeAll(async () => {
      await admin.connect()
    })
    afterAll(async () => {
      await admin.end()
    })

    it('bring each fresh schema up to date while other schemas, with tables, are created and dropped', async () => {
      let churning = true
      let churned = 0
      // Another deployment's schema: made with tables, then dropped, again and again.
      const churn = (async () => {
        while (churning) {
          const schema = `hajri_churn_${randomBytes(6).toString('hex')}`
          await admin.query(`create schema ${schema}`)
          for (let t = 0; t < 20; t++) {
            await admin.query(`create table ${schema}.t${t} (id bigserial primary key, a text, b integer)`)
          }
          await admin.query(`drop schema ${schema} cascade`)
          churned++
        }
      })()
      const failures: string[] = []
      try {
        for (let run = 0; run < 15; run++) {
          const target = await createTestDatabaseUrl('postgres')
          const handle = openDatabase(target.url)
          try {
            const applied = await migrateToLatest(handle.db)
            expect(applied.length).toBeGreaterThan(0)
            // Up to date: a second run applies nothing.
            expect(await migrateToLatest(handle.db)).toEqual([])
          } catch (err) {
            failures.push(`${(err as Error).message}: ${String((err as { cause?: unknown }).cause)}`)
          } finally {
            await handle.close()
            await target.drop()
          }
        }
      } finally {
        churning = false
        await churn
      }
      expect(churned, 'the other schemas came and went during the migrations').toBeGreaterThan(0)
      expect(failures).toEqual([])
    }, 120_000)
  },
)
