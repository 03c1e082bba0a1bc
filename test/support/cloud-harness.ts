import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, describe } from 'vitest'
import { buildApp } from '../../cloud/app.js'
import type { Actor } from '../../cloud/auth/actor.js'
import { type DatabaseHandle, openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import { AttendanceWorker } from '../../cloud/features/attendance/attendance-worker.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import type { Services } from '../../cloud/services.js'
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../../cloud/settings/webhook-settings.js'
import type { EmployeeInput } from '../../shared/employee.js'
import type { Scope } from '../../shared/scopes.js'
import { nowMicros } from '../../shared/time.js'
import { POSTGRES_URL, postgresAvailability } from './services.js'

export type DatabaseKind = 'sqlite' | 'postgres'

/** A throwaway database: a temporary SQLite file, or a fresh schema in the test PostgreSQL. */
export async function createTestDatabaseUrl(
  kind: DatabaseKind,
): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'hajri-test-'))
    return { url: `sqlite:${join(dir, 'hajri.db')}`, drop: () => rm(dir, { recursive: true, force: true }) }
  }
  const schema = `hajri_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: POSTGRES_URL })
  await admin.connect()
  await admin.query(`create schema ${schema}`)
  await admin.end()
  const url = new URL(POSTGRES_URL)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: POSTGRES_URL })
      await c.connect()
      await c.query(`drop schema ${schema} cascade`)
      await c.end()
    },
  }
}

/**
 * One cloud over one throwaway database: the app (in-process, driven with `inject`), its database,
 * and shortcuts for the administration a test needs (tenants, employees, keys).
 */
export class TestCloud {
  databaseUrl = ''
  private handle: DatabaseHandle | undefined
  private instance: FastifyInstance | undefined
  private dropDatabase: (() => Promise<void>) | undefined
  /** The clock the app reads, in µs. Tests may set it; undefined means the real clock. */
  fixedNow: number | undefined

  constructor(
    readonly kind: DatabaseKind,
    private readonly options: TestCloudOptions = {},
  ) {}

  readonly now = (): number => this.fixedNow ?? nowMicros()

  get app(): FastifyInstance {
    if (!this.instance) throw new Error('TestCloud not started')
    return this.instance
  }

  get database(): DatabaseHandle {
    if (!this.handle) throw new Error('TestCloud not started')
    return this.handle
  }

  /** The app's own services: what they emit wakes the app's webhook dispatcher at once. */
  get services(): Services {
    return this.app.services
  }

  async start(): Promise<void> {
    const { url, drop } = await createTestDatabaseUrl(this.kind)
    this.databaseUrl = url
    this.dropDatabase = drop
    this.handle = openDatabase(url, { poolSize: 4, secretKey: TEST_SECRET_KEY })
    await migrateToLatest(this.handle.db)
    this.instance = await buildApp({
      // OAuth limits out of reach too, except where a test sets its own.
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: 1_000_000,
        oauthRateLimitPerClient: 1_000_000,
        consoleRateLimit: 1_000_000,
        webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, ...this.options.webhooks },
      },
      dispatchWebhooks: this.options.webhooks !== undefined,
      computeAttendance: this.options.attendance ?? false,
      database: this.handle,
      logger: false,
      closeDatabase: false,
      now: this.now,
    })
    await this.instance.ready()
  }

  async stop(): Promise<void> {
    await this.instance?.close()
    await this.handle?.close()
    await this.dropDatabase?.()
  }

  async createTenant(options: { timeZone?: string; backfillDays?: number } = {}): Promise<string> {
    const tag = randomBytes(4).toString('hex')
    const { tenantId } = await this.services.tenants.create({
      name: `Tenant ${tag}`,
      adminEmail: `owner-${tag}@example.test`,
      ...options,
    })
    return tenantId
  }

  async createApiKey(
    tenantId: string,
    scopes: Scope[] = ['employees:read', 'attendance:read', 'attendance:write'],
    options: { expiresInSeconds?: number; rateLimitPerMinute?: number } = {},
  ): Promise<string> {
    // The highest limit by default: most tests send more than a minute's worth of requests.
    const created = await this.services.apiKeys.create(
      tenantId,
      { scopes, rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE, ...options },
      TEST_ACTOR,
    )
    return created.key
  }

  /**
   * A new OAuth app of the tenant (the highest limit), and an access token granted to it through the
   * token endpoint, as a client gets one.
   */
  async grantAccessToken(tenantId: string, scopes: Scope[], name: string) {
    const app = await this.services.oauthApps.create(
      tenantId,
      { name, scopes, rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
      TEST_ACTOR,
    )
    const res = await this.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: { grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret },
    })
    if (res.statusCode !== 200) throw new Error(`the token endpoint answered ${res.statusCode}: ${res.body}`)
    return { app, token: (res.json() as { access_token: string }).access_token }
  }

  /** An admin token for the console API (/api/console/v1). */
  async createAdminToken(tenantId: string): Promise<string> {
    return (await this.services.adminTokens.create(tenantId, {}, TEST_ACTOR)).token
  }

  /**
   * Runs the attendance worker's rounds until it has nothing left: the days queued punches touched,
   * finalizing, making new dates' days, and recompute jobs.
   */
  async attendanceRounds(): Promise<void> {
    this.worker ??= new AttendanceWorker({
      stores: this.services.stores,
      recomputer: this.services.recomputer,
      queue: this.services.attendanceQueue,
      outbox: this.services.outbox,
      log: { info: () => {}, warn: () => {}, error: (o: unknown) => console.error(o) } as never,
      now: this.now,
    })
    for (let i = 0; i < 10_000 && (await this.worker.round()); i++) {}
  }

  private worker: AttendanceWorker | undefined

  async upsertEmployees(tenantId: string, inputs: EmployeeInput[]) {
    return this.services.employees.upsert(tenantId, inputs)
  }
}

export interface TestCloudOptions {
  /** Run the webhook dispatcher, with these settings over the defaults. Without it, none runs. */
  webhooks?: Partial<WebhookSettings>
  /** Run the attendance worker in the app, as the server does. Without it, tests call `attendanceRound()`. */
  attendance?: boolean
}

/** Webhook signing secrets are sealed with this in tests (PostgreSQL requires a key to be set). */
export const TEST_SECRET_KEY = randomBytes(32).toString('base64')

/** The audit actor of what tests set up. */
export const TEST_ACTOR: Actor = { name: 'test:harness', ip: null }

export function employee(code: string, overrides: Partial<EmployeeInput> = {}): EmployeeInput {
  return {
    employeeCode: code,
    name: `Employee ${code}`,
    email: `${code.toLowerCase()}@example.test`,
    department: 'Assembly',
    location: 'Pune',
    status: 'ACTIVE',
    ...overrides,
  }
}

const postgres = await postgresAvailability()

/**
 * Runs the same suite against SQLite and PostgreSQL
 * (docs/decisions/0031-real-components-in-tests.md).
 * The PostgreSQL run is skipped, with its reason in the suite name, when PostgreSQL is absent.
 */
export function describeEachDatabase(
  title: string,
  body: (cloud: TestCloud) => void,
  options: TestCloudOptions = {},
): void {
  for (const kind of ['sqlite', 'postgres'] as const) describeOnDatabase(kind, title, body, options)
}

/**
 * The suite against one database: for a long suite split into a file per database, so that its
 * halves run side by side. PostgreSQL's is skipped, with its reason in the suite name, when absent.
 */
export function describeOnDatabase(
  kind: DatabaseKind,
  title: string,
  body: (cloud: TestCloud) => void,
  options: TestCloudOptions = {},
): void {
  const skipReason = kind === 'postgres' ? postgres.skipReason : undefined
  describe.skipIf(skipReason !== undefined)(
    `${title} [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      const cloud = new TestCloud(kind, options)
      beforeAll(() => cloud.start())
      afterAll(() => cloud.stop())
      body(cloud)
    },
  )
}

/** `Authorization` header for a key. */
export function bearer(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` }
}
