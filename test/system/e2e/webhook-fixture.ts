/**
 * What the webhook end-to-end tests share: a throwaway database made ready in this process (a
 * tenant, employees, an API key, an admin token, endpoints on a local receiver), the environment
 * that `hajri-cloud serve` children run with over the same database, and the database's own record
 * of events, deliveries and attempts, read back to judge what the children did. Setting up happens
 * here, through the cloud's services (no dispatcher runs in this process: only the children send).
 */
import type { Kysely } from 'kysely'
import type { TenantContext } from '../../../cloud/auth/tenant-context.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import type { Database } from '../../../cloud/db/schema.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import { createServices, type Services } from '../../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../cloud/settings/webhook-settings.js'
import {
  createTestDatabaseUrl,
  type DatabaseKind,
  employee,
  TEST_ACTOR,
  TEST_SECRET_KEY,
} from '../../support/cloud-harness.js'

export interface FixtureEndpoint {
  id: string
  /** The receiver path it posts to, which tells endpoints apart there. */
  path: string
  secret: string
}

export interface WebhookFixture {
  kind: DatabaseKind
  databaseUrl: string
  database: DatabaseHandle
  services: Services
  tenant: TenantContext
  employeeCodes: string[]
  apiKey: string
  adminToken: string
  endpoints: FixtureEndpoint[]
  /** The environment of a `serve` child over this database (add HAJRI_PORT and webhook settings). */
  serveEnv: Record<string, string>
  close(): Promise<void>
}

export async function openWebhookFixture(
  kind: DatabaseKind,
  options: { receiverUrl: (path: string) => string; endpointPaths: string[]; employees: number },
): Promise<WebhookFixture> {
  const { url, drop } = await createTestDatabaseUrl(kind)
  const database = openDatabase(url, { poolSize: 4, secretKey: TEST_SECRET_KEY })
  try {
    await migrateToLatest(database.db)
    // The allowlist lets the endpoints point at the receiver on 127.0.0.1
    // (the SSRF rules, docs/decisions/0022-webhook-ssrf-guard.md).
    const services = createServices(database, {
      webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, allowlist: ['127.0.0.1'] },
    })
    const { tenantId } = await services.tenants.create({
      name: 'Webhook e2e',
      adminEmail: 'owner@webhooks.example.test',
      backfillDays: 30,
    })
    // Endpoints first: an endpoint hears only of events from after it was registered, and every
    // event here is to reach every endpoint.
    const endpoints: FixtureEndpoint[] = []
    for (const path of options.endpointPaths) {
      const created = await services.webhookEndpoints.create(
        tenantId,
        { url: options.receiverUrl(path), description: `e2e ${path}` },
        TEST_ACTOR,
      )
      endpoints.push({ id: created.endpoint.id, path, secret: created.secret })
    }
    const employeeCodes = Array.from(
      { length: options.employees },
      (_, i) => `E${String(i + 1).padStart(4, '0')}`,
    )
    await services.employees.upsert(
      tenantId,
      employeeCodes.map((code) => employee(code)),
    )
    const apiKey = (
      await services.apiKeys.create(
        tenantId,
        { scopes: ['attendance:write'], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
        TEST_ACTOR,
      )
    ).key
    const adminToken = (await services.adminTokens.create(tenantId, {}, TEST_ACTOR)).token
    return {
      kind,
      databaseUrl: url,
      database,
      services,
      tenant: { id: tenantId, timeZone: 'Asia/Kolkata', backfillDays: 30 },
      employeeCodes,
      apiKey,
      adminToken,
      endpoints,
      serveEnv: {
        HAJRI_DATABASE_URL: url,
        HAJRI_HOST: '127.0.0.1',
        HAJRI_SECRET_KEY: TEST_SECRET_KEY,
        HAJRI_WEBHOOK_ALLOWLIST: '127.0.0.1',
        HAJRI_DATABASE_POOL_SIZE: '4',
        HAJRI_LOG_LEVEL: 'warn',
      },
      close: async () => {
        await database.close()
        await drop()
      },
    }
  } catch (err) {
    await database.close()
    await drop()
    throw err
  }
}

/** The tenant's webhook record as the database holds it. */
export async function readWebhookRecord(db: Kysely<Database>, tenantId: string) {
  const [events, deliveries, attempts, punches] = await Promise.all([
    db
      .selectFrom('webhook_events')
      .select(['id', 'type', 'body', 'fanned_out'])
      .where('tenant_id', '=', tenantId)
      .execute(),
    db
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'event_id', 'status', 'attempts', 'claimed_until'])
      .where('tenant_id', '=', tenantId)
      .execute(),
    db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'number', 'response_status', 'error'])
      .where('tenant_id', '=', tenantId)
      .orderBy('delivery_id')
      .orderBy('number')
      .execute(),
    db
      .selectFrom('punches')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow(),
  ])
  return { events, deliveries, attempts, punches: Number(punches.n) }
}

export type WebhookRecord = Awaited<ReturnType<typeof readWebhookRecord>>

/** What is left to do: events not fanned out, deliveries not made, deliveries not yet succeeded. */
export function openWork(record: WebhookRecord, endpoints: number) {
  return {
    unfanned: record.events.filter((e) => e.fanned_out === 0).length,
    missingDeliveries: record.events.length * endpoints - record.deliveries.length,
    notSucceeded: record.deliveries.filter((d) => d.status !== 'succeeded').length,
  }
}

/** Every event fanned out, to every endpoint, and every delivery succeeded. */
export function isDone(record: WebhookRecord, endpoints: number): boolean {
  const open = openWork(record, endpoints)
  return open.unfanned === 0 && open.missingDeliveries === 0 && open.notSucceeded === 0
}

/**
 * A steady source of webhook events: punch batches posted to the public API of the cloud child
 * (each stored punch emits attendance.punch.created in its own transaction). A batch that fails
 * (the child is dead, or died mid-request) is sent again, the same punches with the same
 * externalIds, so nothing stored twice and nothing made up: the database is the record.
 */
export class PunchPump {
  private nextIndex = 0
  private budget = 0
  private stopped = false
  private loop: Promise<void> | undefined
  /** What stopped the pump, if something did (a punch the cloud rejected: a fault of the test). */
  failure: Error | undefined
  /** Batches answered 200, and sends that failed and were sent again. */
  readonly counts = { batches: 0, resent: 0 }

  constructor(
    private readonly options: {
      baseUrls: () => string[]
      apiKey: string
      employeeCodes: readonly string[]
      batchSize: number
      intervalMs: number
      random: () => number
      /** Whole seconds in the recent past: inside the backfill window, never "in the future". */
      firstPunchMs: number
    },
  ) {}

  /** Punches posted so far (answered). */
  get posted(): number {
    return this.nextIndex
  }

  get idle(): boolean {
    return this.budget <= 0
  }

  /** Lets `punches` more be posted. */
  allow(punches: number): void {
    this.budget += punches
  }

  start(): void {
    this.loop ??= this.run().catch((err: Error) => {
      this.failure = err
    })
  }

  /** Stops posting; throws what stopped it on its own, if anything did. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.loop
    if (this.failure) throw this.failure
  }

  private async run(): Promise<void> {
    let round = 0
    while (!this.stopped) {
      if (this.budget <= 0) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      const { batchSize, employeeCodes, firstPunchMs } = this.options
      const punches = Array.from({ length: batchSize }, (_, i) => {
        const n = this.nextIndex + i
        return {
          employeeCode: employeeCodes[n % employeeCodes.length],
          punchType: Math.floor(n / employeeCodes.length) % 2 === 0 ? 'IN' : 'OUT',
          punchedAt: new Date(firstPunchMs + n * 1000).toISOString(),
          externalId: `e2e-punch-${n}`,
        }
      })
      const urls = this.options.baseUrls()
      const url = urls[round++ % urls.length]
      try {
        const response = await fetch(`${url}/api/public/v1/attendance/punches/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ punches }),
          signal: AbortSignal.timeout(10_000),
        })
        if (response.status !== 200)
          throw new Error(`batch answered ${response.status}: ${await response.text()}`)
        const body = (await response.json()) as { results: { status: string }[] }
        const rejected = body.results.filter((r) => r.status === 'rejected')
        if (rejected.length > 0) throw new Error(`punches rejected: ${JSON.stringify(rejected[0])}`)
        this.nextIndex += batchSize
        this.budget -= batchSize
        this.counts.batches++
        await new Promise((resolve) =>
          setTimeout(resolve, this.options.intervalMs * (0.5 + this.options.random())),
        )
      } catch (err) {
        // A rejected punch is a fault of this test, not an outage: stop on it.
        if ((err as Error).message.startsWith('punches rejected')) throw err
        this.counts.resent++
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  }
}
