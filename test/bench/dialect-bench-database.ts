import SqliteDatabase from 'better-sqlite3'
import pg from 'pg'
import { postgresAvailability } from '../support/services.js'
import { createBenchDatabase } from './bench-database.js'
import { createWebhookBenchDatabase } from './webhook-bench-database.js'
import { readWebhookBenchSettings, type WebhookBenchDialect } from './webhook-bench-settings.js'

export type BenchDialect = WebhookBenchDialect

/** A seeded bench database on either dialect: one tenant, its API key, ACTIVE employees. */
export interface DialectBenchDatabase {
  dialect: BenchDialect
  /** `sqlite:<file>` or a PostgreSQL URL whose search_path is a throwaway schema. */
  url: string
  tenantId: string
  apiKey: string
  employeeCodes: string[]
  /** HAJRI_SECRET_KEY for a server that loads it at start (`serve`); undefined on SQLite (a file beside it). */
  secretKey: string | undefined
  /** Rows in the punch log now. */
  countPunches(): Promise<number>
  remove(): Promise<void>
}

/**
 * On SQLite a temporary file (bench-database.ts); on PostgreSQL a throwaway schema in the database
 * the tests use (HAJRI_TEST_POSTGRES_URL), both migrated and seeded through the product's services.
 */
export async function createDialectBenchDatabase(
  dialect: BenchDialect,
  employees: number,
): Promise<DialectBenchDatabase> {
  if (dialect === 'sqlite') {
    const db = await createBenchDatabase(employees)
    return {
      dialect,
      url: db.url,
      tenantId: db.tenantId,
      apiKey: db.apiKey,
      employeeCodes: db.employeeCodes,
      secretKey: undefined,
      countPunches: async () => {
        const sqlite = new SqliteDatabase(db.path, { readonly: true })
        try {
          return (sqlite.prepare('select count(*) as n from punches').get() as { n: number }).n
        } finally {
          sqlite.close()
        }
      },
      remove: db.remove,
    }
  }
  const { postgresUrl } = readWebhookBenchSettings()
  const db = await createWebhookBenchDatabase({
    dialect: 'postgres',
    postgresUrl,
    receiverUrl: 'http://127.0.0.1:9/',
    employees,
    layouts: [{ name: 'bench', endpoints: 0, paused: false }],
  })
  const tenant = db.tenants.bench
  if (!tenant) throw new Error('no bench tenant')
  return {
    dialect,
    url: db.url,
    tenantId: tenant.tenantId,
    apiKey: tenant.apiKey,
    employeeCodes: db.employeeCodes,
    secretKey: db.secretKey,
    countPunches: async () => {
      const client = new pg.Client({ connectionString: db.url })
      await client.connect()
      try {
        return Number((await client.query('select count(*) as n from punches')).rows[0].n)
      } finally {
        await client.end()
      }
    },
    remove: db.remove,
  }
}

/** Why a PostgreSQL benchmark cannot run here (skipped, as the tests do), or undefined. */
export async function postgresSkipReason(dialect: BenchDialect): Promise<string | undefined> {
  if (dialect !== 'postgres') return undefined
  return (await postgresAvailability()).skipReason
}

export function dialectLabel(dialect: BenchDialect): string {
  return dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'
}
