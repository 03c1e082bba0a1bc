import { randomInt } from 'node:crypto'
import { createServer } from 'node:net'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { openRedis } from '../../../cloud/db/redis.js'
import { formatTimestamp, nowMicros } from '../../../shared/time.js'
import {
  bearer,
  type DatabaseKind,
  describeEachDatabase,
  employee,
  TEST_ACTOR,
  TestCloud,
} from '../../support/cloud-harness.js'
import { postgresAvailability, REDIS_URL, redisAvailability } from '../../support/services.js'

const EMPLOYEES = '/api/public/v1/employees'
const PUNCHES = '/api/public/v1/attendance/punches'
const TOKEN = '/api/oauth/token'
// The nameSpace cloud/app.ts gives the public API's limiter: where a credential's counter lives in Redis.
const API_NAMESPACE = 'hajri-rl-api:'

/** One instance's `inject`, so that a helper can send to either of two instances. */
type Inject = (options: InjectOptions) => Promise<LightMyRequestResponse>
const injectInto =
  (app: FastifyInstance): Inject =>
  (options) =>
    app.inject(options)

function expectLimitHeaders(res: LightMyRequestResponse, limit: number, remaining: number): void {
  expect(res.headers['ratelimit-limit']).toBe(String(limit))
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining))
  // Seconds until the one-minute window ends.
  const reset = Number(res.headers['ratelimit-reset'])
  expect(Number.isInteger(reset) && reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`).toBe(true)
}

function expectRateLimited(res: LightMyRequestResponse, limit: number): void {
  expect(res.statusCode, res.body).toBe(429)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(res.json()).toMatchObject({
    type: 'urn:hajri:problem:rate_limited',
    status: 429,
    code: 'rate_limited',
    instance: `urn:hajri:request:${res.headers['x-request-id']}`,
  })
  const retryAfter = Number(res.headers['retry-after'])
  expect(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After ${retryAfter}`,
  ).toBe(true)
  expectLimitHeaders(res, limit, 0)
}

/** RFC 6749 §5.2 shape of a refused OAuth request because of a limit. */
function expectOAuthLimited(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(429)
  expect(res.headers['content-type']).toMatch(/^application\/json/)
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.json()).toMatchObject({ error: 'temporarily_unavailable', status: 429 })
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1)
}

const statusCounts = (responses: readonly LightMyRequestResponse[]) => {
  const counts: Record<number, number> = {}
  for (const res of responses) counts[res.statusCode] = (counts[res.statusCode] ?? 0) + 1
  return counts
}

function getEmployees(inject: Inject, token: string, headers: Record<string, string> = {}) {
  return inject({ method: 'GET', url: EMPLOYEES, headers: { ...bearer(token), ...headers } })
}

/** An access token by client_secret_post, form-encoded as RFC 6749 §4.4.2 has it. */
async function accessToken(inject: Inject, clientId: string, clientSecret: string): Promise<string> {
  const res = await inject({
    method: 'POST',
    url: TOKEN,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }).toString(),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().access_token
}

function tokenRequest(
  inject: Inject,
  clientId: string,
  clientSecret: string,
  options: { basic?: boolean; remoteAddress?: string } = {},
) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (options.basic) {
    // RFC 6749 §2.3.1: each half form-encoded, then joined and base64-encoded.
    const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`
  } else {
    form.set('client_id', clientId)
    form.set('client_secret', clientSecret)
  }
  return inject({
    method: 'POST',
    url: TOKEN,
    headers,
    payload: form.toString(),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  })
}

/** An API key and its id (the limiter counts by id). */
async function createKey(
  cloud: TestCloud,
  tenantId: string,
  rateLimitPerMinute: number,
  scopes = ['employees:read'],
) {
  const { id, key } = await cloud.services.apiKeys.create(
    tenantId,
    { scopes, rateLimitPerMinute },
    TEST_ACTOR,
  )
  return { id, key }
}

async function createOAuthApp(cloud: TestCloud, tenantId: string, rateLimitPerMinute: number) {
  return cloud.services.oauthApps.create(
    tenantId,
    { name: 'rate-limited app', scopes: ['employees:read'], rateLimitPerMinute },
    TEST_ACTOR,
  )
}

describeEachDatabase('per-credential rate limits (one instance)', (cloud) => {
  let tenantId: string
  let otherTenantId: string

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    otherTenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
  })

  const inject: Inject = (options) => cloud.app.inject(options)

  it('lets exactly N requests of an API key through in a window, then answers 429 rate_limited', async () => {
    const N = 25
    const { key } = await createKey(cloud, tenantId, N)
    for (let i = 1; i <= N; i++) {
      const res = await getEmployees(inject, key)
      expect(res.statusCode, `request ${i}: ${res.body}`).toBe(200)
      expectLimitHeaders(res, N, N - i)
    }
    expectRateLimited(await getEmployees(inject, key), N)
    // Refused for the rest of the window, not just once.
    expectRateLimited(await getEmployees(inject, key), N)
  })

  it('counts a concurrent burst exactly: N of 2N succeed', async () => {
    const N = 25
    const { key } = await createKey(cloud, tenantId, N)
    const responses = await Promise.all(Array.from({ length: 2 * N }, () => getEmployees(inject, key)))
    expect(statusCounts(responses)).toEqual({ 200: N, 429: N })
    for (const res of responses.filter((r) => r.statusCode === 429)) expectRateLimited(res, N)
  })

  it('counts every route of the API against the one limit of the credential', async () => {
    const N = 4
    const { key } = await createKey(cloud, tenantId, N)
    const urls = [EMPLOYEES, `${EMPLOYEES}/E001`, EMPLOYEES, `${EMPLOYEES}/E001`]
    for (const [i, url] of urls.entries()) {
      const res = await inject({ method: 'GET', url, headers: bearer(key) })
      expect(res.statusCode, res.body).toBe(200)
      expectLimitHeaders(res, N, N - 1 - i)
    }
    expectRateLimited(await inject({ method: 'GET', url: `${EMPLOYEES}/E001`, headers: bearer(key) }), N)
  })

  it('refuses a write over the limit before storing it', async () => {
    const N = 2
    const { key } = await createKey(cloud, tenantId, N, ['attendance:write', 'attendance:read'])
    const punch = (i: number) => ({
      employeeCode: 'E001',
      punchType: 'IN',
      punchedAt: formatTimestamp(nowMicros() - (i + 1) * 60_000_000),
      deviceId: 'gate-1',
      externalId: `rate-limit-${key.slice(-8)}-${i}`,
    })
    const posts = []
    for (let i = 0; i < N + 1; i++) {
      posts.push(await inject({ method: 'POST', url: PUNCHES, headers: bearer(key), payload: punch(i) }))
    }
    expect(posts.map((r) => r.statusCode)).toEqual([201, 201, 429])
    expectRateLimited(posts[2] as LightMyRequestResponse, N)
    // Read back with another key: the refused punch is not there.
    const reader = await cloud.createApiKey(tenantId, ['attendance:read'])
    const listed = await inject({ method: 'GET', url: `${PUNCHES}?limit=200`, headers: bearer(reader) })
    const externalIds = (listed.json().data as { externalId: string }[]).map((p) => p.externalId)
    expect(externalIds).toContain(punch(0).externalId)
    expect(externalIds).toContain(punch(1).externalId)
    expect(externalIds).not.toContain(punch(2).externalId)
  })

  it('keeps separate counters for separate keys, and another tenant is unaffected', async () => {
    const N = 5
    const first = await createKey(cloud, tenantId, N)
    const second = await createKey(cloud, tenantId, N)
    const otherTenant = await createKey(cloud, otherTenantId, N)
    for (let i = 0; i < N; i++) expect((await getEmployees(inject, first.key)).statusCode).toBe(200)
    expectRateLimited(await getEmployees(inject, first.key), N)

    // Same tenant, another key: its whole allowance is left.
    const fresh = await getEmployees(inject, second.key)
    expect(fresh.statusCode).toBe(200)
    expectLimitHeaders(fresh, N, N - 1)
    // Another tenant: untouched.
    const other = await getEmployees(inject, otherTenant.key)
    expect(other.statusCode).toBe(200)
    expectLimitHeaders(other, N, N - 1)
    // And the exhausted key is still refused.
    expectRateLimited(await getEmployees(inject, first.key), N)
  })

  it('gives every token of an OAuth app the one limit of the app', async () => {
    const N = 25
    const app = await createOAuthApp(cloud, tenantId, N)
    const tokens = [
      await accessToken(inject, app.clientId, app.clientSecret),
      await accessToken(inject, app.clientId, app.clientSecret),
    ] as const
    expect(tokens[0]).not.toBe(tokens[1])
    for (let i = 1; i <= N; i++) {
      const res = await getEmployees(inject, tokens[i % 2] as string)
      expect(res.statusCode, `request ${i}: ${res.body}`).toBe(200)
      expectLimitHeaders(res, N, N - i)
    }
    expectRateLimited(await getEmployees(inject, tokens[0]), N)
    expectRateLimited(await getEmployees(inject, tokens[1]), N)
    // A token issued after the limit was reached shares the spent allowance.
    const third = await accessToken(inject, app.clientId, app.clientSecret)
    expectRateLimited(await getEmployees(inject, third), N)

    // Another app of the tenant, a key of the tenant, and another tenant's app are unaffected.
    const otherApp = await createOAuthApp(cloud, tenantId, N)
    const otherToken = await accessToken(inject, otherApp.clientId, otherApp.clientSecret)
    expectLimitHeaders(await getEmployees(inject, otherToken), N, N - 1)
    const { key } = await createKey(cloud, tenantId, N)
    expectLimitHeaders(await getEmployees(inject, key), N, N - 1)
    const foreignApp = await createOAuthApp(cloud, otherTenantId, N)
    const foreignToken = await accessToken(inject, foreignApp.clientId, foreignApp.clientSecret)
    expectLimitHeaders(await getEmployees(inject, foreignToken), N, N - 1)
  })
})

describe('OAuth endpoint limits against guessing secrets', () => {
  const cloud = new TestCloud('sqlite')
  let tenantId: string
  const apps: FastifyInstance[] = []

  /** An app over the cloud's database with its own OAuth limits and its own counters. */
  async function appWithLimits(perIp: number, perClient: number): Promise<FastifyInstance> {
    const app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: perIp,
        oauthRateLimitPerClient: perClient,
      },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
    })
    apps.push(app)
    await app.ready()
    return app
  }

  beforeAll(async () => {
    await cloud.start()
    tenantId = await cloud.createTenant()
  })
  afterAll(async () => {
    for (const app of apps) await app.close()
    await cloud.stop()
  })

  it('refuses an address after its limit of failed attempts at a client id, whichever the method', async () => {
    const perClient = 3
    const app = await appWithLimits(1000, perClient)
    const inject = injectInto(app)
    const target = await createOAuthApp(cloud, tenantId, 600)
    const bystander = await createOAuthApp(cloud, tenantId, 600)

    // Guessing: wrong secrets, by both client authentication methods.
    for (let i = 0; i < perClient; i++) {
      const res = await tokenRequest(inject, target.clientId, `hjs_wrong${i}`, { basic: i % 2 === 0 })
      expect(res.statusCode, res.body).toBe(401)
      expect(res.json().error).toBe('invalid_client')
    }
    expectOAuthLimited(await tokenRequest(inject, target.clientId, 'hjs_wrong-again'))
    expectOAuthLimited(await tokenRequest(inject, target.clientId, 'hjs_wrong-again', { basic: true }))
    // From this address even the right secret waits for the window: it is not looked at, so a
    // guesser cannot learn it was right.
    expectOAuthLimited(await tokenRequest(inject, target.clientId, target.clientSecret))
    // Another address has failures of its own to spend, and the right secret always works from
    // there: client ids are public, so a count per client id alone would let anyone lock a client out
    // (security review #2). Secrets are 128-bit random: guessing from many hosts gains nothing.
    expect(
      (await tokenRequest(inject, target.clientId, 'hjs_wrong', { remoteAddress: '198.51.100.7' }))
        .statusCode,
    ).toBe(401)
    const elsewhere = await tokenRequest(inject, target.clientId, target.clientSecret, {
      remoteAddress: '198.51.100.8',
    })
    expect(elsewhere.statusCode, elsewhere.body).toBe(200)

    // Another client from the same address is unaffected.
    const res = await tokenRequest(inject, bystander.clientId, bystander.clientSecret)
    expect(res.statusCode, res.body).toBe(200)
  })

  it('refuses an address after its limit of attempts, across client ids', async () => {
    const perIp = 5
    const app = await appWithLimits(perIp, 1000)
    const inject = injectInto(app)
    const known = await createOAuthApp(cloud, tenantId, 600)
    const attacker = '203.0.113.9'
    for (let i = 0; i < perIp; i++) {
      // A different client id every time: only the per-address limit can see this.
      const res = await tokenRequest(inject, `guessed-client-${i}`, 'hjs_whatever', {
        remoteAddress: attacker,
      })
      expect(res.statusCode, res.body).toBe(401)
    }
    const refused = await tokenRequest(inject, known.clientId, known.clientSecret, {
      remoteAddress: attacker,
    })
    expectOAuthLimited(refused)
    expect(refused.headers['ratelimit-limit']).toBe(String(perIp))
    // The other OAuth endpoints count against the same address.
    const revoke = await inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      remoteAddress: attacker,
      payload: { token: 'hja_x', client_id: known.clientId, client_secret: known.clientSecret },
    })
    expectOAuthLimited(revoke)

    // Another address is unaffected.
    const res = await tokenRequest(inject, known.clientId, known.clientSecret, {
      remoteAddress: '203.0.113.10',
    })
    expect(res.statusCode, res.body).toBe(200)
  })
})

describe('when Redis is configured but unreachable', () => {
  const cloud = new TestCloud('sqlite')
  let app: FastifyInstance
  let redis: Redis
  const redisErrors: Error[] = []

  beforeAll(async () => {
    await cloud.start()
    // A port that was free a moment ago: nothing answers there.
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer()
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
      })
    })
    // The product's own client settings: no offline queue, so a command fails at once.
    redis = openRedis(`redis://127.0.0.1:${port}`, (err) => redisErrors.push(err))
    app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: 1000,
        oauthRateLimitPerClient: 1000,
      },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
      redis,
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    redis?.disconnect()
    await cloud.stop()
  })

  it('serves requests (fails open) instead of refusing them', async () => {
    const tenantId = await cloud.createTenant()
    const N = 2
    const { key } = await createKey(cloud, tenantId, N)
    const inject = injectInto(app)
    const responses = []
    for (let i = 0; i < 3 * N; i++) responses.push(await getEmployees(inject, key))
    expect(responses.map((r) => r.statusCode)).toEqual(Array(3 * N).fill(200))
    expect(redis.status).not.toBe('ready')

    const oauthApp = await createOAuthApp(cloud, tenantId, N)
    const res = await tokenRequest(inject, oauthApp.clientId, oauthApp.clientSecret)
    expect(res.statusCode, res.body).toBe(200)
  })
})

const redisState = await redisAvailability()
const postgres = await postgresAvailability()

/** Two instances of the cloud, as two servers would run: each its own database pool and Redis client. */
class TwoInstances {
  readonly cloud: TestCloud
  readonly instances: FastifyInstance[] = []
  private readonly clients: Redis[] = []
  private secondDatabase: DatabaseHandle | undefined
  /** Redis keys of the counters the tests made, deleted at the end. */
  readonly counterKeys: string[] = []
  /** Client ids of the OAuth apps the tests made: the token endpoint may count per client id. */
  readonly clientIds: string[] = []
  /**
   * This run's client address: the OAuth endpoints count per address, and a counter of our own is
   * one we can delete without touching another run's.
   */
  private readonly remoteAddress = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`

  constructor(kind: DatabaseKind) {
    this.cloud = new TestCloud(kind)
  }

  async start(withRedis: boolean): Promise<void> {
    await this.cloud.start()
    this.secondDatabase = openDatabase(this.cloud.databaseUrl, { poolSize: 4 })
    for (const database of [this.cloud.database, this.secondDatabase]) {
      const redis = withRedis
        ? new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
        : undefined
      if (redis) {
        this.clients.push(redis)
        // enableOfflineQueue: false refuses commands until the connection is up.
        if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
      }
      const app = await buildApp({
        config: {
          bodyLimitBytes: 1024 * 1024,
          trustProxy: false,
          logLevel: 'silent',
          oauthRateLimitPerIp: 1_000_000,
          oauthRateLimitPerClient: 1_000_000,
        },
        database,
        logger: false,
        closeDatabase: false,
        ...(redis ? { redis } : {}),
      })
      await app.ready()
      this.instances.push(app)
    }
  }

  async stop(): Promise<void> {
    for (const app of this.instances) await app.close()
    const [first] = this.clients
    if (first) {
      // The OAuth per-address counter, and any per-client counter, named after this run's address
      // and apps.
      const oauthKeys = []
      for (const suffix of [this.remoteAddress, ...this.clientIds]) {
        oauthKeys.push(...(await first.keys(`hajri-rl-oauth:*${suffix}`)))
      }
      const keys = [...this.counterKeys, ...oauthKeys]
      if (keys.length > 0) await first.del(...keys)
    }
    for (const client of this.clients) await client.quit()
    await this.secondDatabase?.close()
    await this.cloud.stop()
  }

  /** A counter as Redis holds it. */
  async counter(key: string): Promise<number> {
    return Number(await this.clients[0]?.get(key))
  }

  inject(i: number): Inject {
    const app = this.instances[i % 2] as FastifyInstance
    return (options) => app.inject({ remoteAddress: this.remoteAddress, ...options })
  }
}

/** Sends `count` requests at once, alternating between the instances; the number answered 2xx. */
async function alternatingBurst(
  instances: TwoInstances,
  count: number,
  token: (i: number) => string,
): Promise<{ ok: number; responses: LightMyRequestResponse[] }> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) => getEmployees(instances.inject(i), token(i))),
  )
  return { ok: responses.filter((r) => r.statusCode >= 200 && r.statusCode < 300).length, responses }
}

for (const kind of ['sqlite', 'postgres'] as DatabaseKind[]) {
  const skipReason = redisState.skipReason ?? (kind === 'postgres' ? postgres.skipReason : undefined)
  describe.skipIf(skipReason !== undefined)(
    `rate limits shared by two instances through Redis [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      const pair = new TwoInstances(kind)
      let tenantId: string

      beforeAll(async () => {
        await pair.start(true)
        tenantId = await pair.cloud.createTenant()
      })
      afterAll(() => pair.stop())

      it('keeps the combined allowance of a key within 5% of N (N = 200)', async () => {
        const N = 200
        const { id, key } = await createKey(pair.cloud, tenantId, N)
        pair.counterKeys.push(`${API_NAMESPACE}key:${id}`)
        const { ok, responses } = await alternatingBurst(pair, 2 * N, () => key)
        expect(ok).toBeGreaterThanOrEqual(Math.floor(0.95 * N))
        expect(ok).toBeLessThanOrEqual(Math.ceil(1.05 * N))
        // Whatever was not served was refused by the limiter, by both instances.
        for (const res of responses.filter((r) => r.statusCode !== 200)) expectRateLimited(res, N)
        const refusedBy = new Set(responses.map((r, i) => (r.statusCode === 429 ? i % 2 : -1)))
        expect(refusedBy).toEqual(new Set([-1, 0, 1]))
        // The counter is in Redis, where every instance reads it.
        expect(await pair.counter(`${API_NAMESPACE}key:${id}`)).toBe(2 * N)
      })

      it('lets exactly N requests of a key through in sequence, across both instances', async () => {
        const N = 25
        const { id, key } = await createKey(pair.cloud, tenantId, N)
        pair.counterKeys.push(`${API_NAMESPACE}key:${id}`)
        for (let i = 1; i <= N; i++) {
          const res = await getEmployees(pair.inject(i), key)
          expect(res.statusCode, `request ${i}: ${res.body}`).toBe(200)
          expectLimitHeaders(res, N, N - i)
        }
        expectRateLimited(await getEmployees(pair.inject(0), key), N)
        expectRateLimited(await getEmployees(pair.inject(1), key), N)
      })

      it("shares an OAuth app's limit between its tokens on both instances", async () => {
        const N = 25
        const app = await createOAuthApp(pair.cloud, tenantId, N)
        pair.counterKeys.push(`${API_NAMESPACE}app:${app.id}`)
        pair.clientIds.push(app.clientId)
        const tokens = [
          await accessToken(pair.inject(0), app.clientId, app.clientSecret),
          await accessToken(pair.inject(1), app.clientId, app.clientSecret),
        ]
        // Token 0 on instance 0, token 1 on instance 1: the two share nothing but Redis.
        const { ok, responses } = await alternatingBurst(pair, 2 * N, (i) => tokens[i % 2] as string)
        expect(ok).toBe(N)
        for (const res of responses.filter((r) => r.statusCode !== 200)) expectRateLimited(res, N)
        // A key of the same tenant has its own counter.
        const other = await createKey(pair.cloud, tenantId, N)
        pair.counterKeys.push(`${API_NAMESPACE}key:${other.id}`)
        expectLimitHeaders(await getEmployees(pair.inject(0), other.key), N, N - 1)
      })
    },
  )
}

describe('two instances without Redis (control: the shared-counter test can fail)', () => {
  const pair = new TwoInstances('sqlite')
  beforeAll(() => pair.start(false))
  afterAll(() => pair.stop())

  it('each instance counts alone, so together they let about 2N through', async () => {
    const N = 200
    const tenantId = await pair.cloud.createTenant()
    const { key } = await createKey(pair.cloud, tenantId, N)
    const { ok } = await alternatingBurst(pair, 2 * N, () => key)
    expect(ok).toBeGreaterThan(Math.ceil(1.05 * N))
  })
})
