import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { Actor } from '../../cloud/auth/actor.js'
import { type DatabaseHandle, openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createServices, type Services } from '../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../cloud/settings/webhook-settings.js'
import { benchEmployee } from './bench-database.js'
import type { WebhookBenchDialect } from './webhook-bench-settings.js'

const ACTOR: Actor = { name: 'bench', ip: null }

export interface BenchEndpoint {
  id: string
  /** The signing secret (whsec_...), to check signatures and to sign the baseline's requests. */
  secret: string
  /** Its path on the receiver, `/hook/<tenant name>/<n>`. */
  path: string
}

export interface WebhookBenchTenant {
  tenantId: string
  /** Every scope, the highest rate limit: the benchmark measures webhooks, not the limiter. */
  apiKey: string
  /** For /api/console/v1 (pause, resume). */
  adminToken: string
  endpoints: BenchEndpoint[]
}

export interface WebhookBenchDatabase {
  /** `sqlite:<file>` or `postgres://…?options=-c search_path=<schema>`, for the server process. */
  url: string
  dialect: WebhookBenchDialect
  /** The key that seals the signing secrets (HAJRI_SECRET_KEY), which the server must be given too. */
  secretKey: string
  /** Every tenant has these employees, all ACTIVE. */
  employeeCodes: string[]
  tenants: Record<string, WebhookBenchTenant>
  remove(): Promise<void>
}

export interface TenantLayout {
  /** Names the tenant and its receiver paths. */
  name: string
  endpoints: number
  /** Endpoints start paused: deliveries wait for a resume (a backlog). */
  paused: boolean
}

/**
 * Where the benchmark's data goes: a temporary SQLite file, or a schema of its own in the
 * PostgreSQL the tests use (as test/support/cloud-harness.ts makes them), dropped afterwards.
 */
async function throwawayDatabase(
  dialect: WebhookBenchDialect,
  postgresUrl: string,
): Promise<{ url: string; remove(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-webhooks-'))
    return { url: `sqlite:${join(dir, 'hajri.db')}`, remove: () => rm(dir, { recursive: true, force: true }) }
  }
  const schema = `hajri_bench_${randomBytes(6).toString('hex')}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 })
    try {
      await client.connect()
      await client.query(statement)
    } catch (err) {
      throw new Error(
        `PostgreSQL at ${postgresUrl} (HAJRI_TEST_POSTGRES_URL): ${statement} failed: ${(err as Error).message}`,
        { cause: err },
      )
    } finally {
      await client.end()
    }
  }
  await admin(`create schema ${schema}`)
  const url = new URL(postgresUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), remove: () => admin(`drop schema ${schema} cascade`) }
}

/** Migrates, then makes the tenants of the layouts through the product's services. */
async function seed(
  handle: DatabaseHandle,
  services: Services,
  options: { receiverUrl: string; employees: number; layouts: readonly TenantLayout[] },
): Promise<Pick<WebhookBenchDatabase, 'employeeCodes' | 'tenants'>> {
  await migrateToLatest(handle.db)
  const employeeCodes = Array.from(
    { length: options.employees },
    (_, i) => `E${String(i + 1).padStart(6, '0')}`,
  )
  const tag = randomBytes(3).toString('hex')
  const tenants: Record<string, WebhookBenchTenant> = {}
  for (const layout of options.layouts) {
    const { tenantId } = await services.tenants.create({
      name: `Bench ${layout.name}`,
      adminEmail: `owner-${layout.name}-${tag}@example.test`,
    })
    const { key } = await services.apiKeys.create(
      tenantId,
      {
        scopes: ['employees:read', 'attendance:read', 'attendance:write'],
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
      },
      ACTOR,
    )
    // Before the endpoints: the employees' own events have no one to go to.
    await services.employees.upsert(tenantId, employeeCodes.map(benchEmployee))
    const adminToken = (await services.adminTokens.create(tenantId, { name: 'bench' }, ACTOR)).token
    const endpoints: BenchEndpoint[] = []
    for (let n = 1; n <= layout.endpoints; n++) {
      const path = `/hook/${layout.name}/${n}`
      const { endpoint, secret } = await services.webhookEndpoints.create(
        tenantId,
        { url: `${options.receiverUrl}${path}`, description: `bench ${layout.name} ${n}` },
        ACTOR,
      )
      if (layout.paused) await services.webhookEndpoints.pause(tenantId, endpoint.id, ACTOR)
      endpoints.push({ id: endpoint.id, secret, path })
    }
    tenants[layout.name] = { tenantId, apiKey: key, adminToken, endpoints }
  }
  return { employeeCodes, tenants }
}

/**
 * A throwaway database, migrated, written through the product's own services: per layout a tenant
 * with employees, an API key, an admin token and webhook endpoints on the receiver, every one
 * subscribed to every event. The signing secrets are sealed with a key made here and handed to the
 * server, on either database (PostgreSQL has no default key).
 */
export async function createWebhookBenchDatabase(options: {
  dialect: WebhookBenchDialect
  postgresUrl: string
  receiverUrl: string
  employees: number
  layouts: readonly TenantLayout[]
}): Promise<WebhookBenchDatabase> {
  const { url, remove } = await throwawayDatabase(options.dialect, options.postgresUrl)
  const secretKey = randomBytes(32).toString('base64')
  const handle = openDatabase(url, { poolSize: 2, secretKey })
  const services = createServices(handle, {
    webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, allowlist: ['127.0.0.1'] },
  })
  try {
    try {
      const seeded = await seed(handle, services, options)
      return { url, dialect: options.dialect, secretKey, ...seeded, remove }
    } finally {
      services.urlPolicy.close()
      await handle.close()
    }
  } catch (err) {
    await remove().catch(() => {})
    throw err
  }
}
