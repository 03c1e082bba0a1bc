/**
 * Revocation is effective on the next request, also when two cloud instances share PostgreSQL
 * (docs/decisions/0016-oauth-client-credentials.md). Two apps, each with its own connection pool on the same
 * schema, as two servers behind a load balancer would be: a credential revoked through one is refused by the
 * other on the very next request, so neither may cache a credential.
 */
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../../cloud/app.js'
import { type DatabaseHandle, openDatabase } from '../../../../cloud/db/database.js'
import { migrateToLatest } from '../../../../cloud/db/migrate.js'
import { createServices, type Services } from '../../../../cloud/services.js'
import { createTestDatabaseUrl, TEST_ACTOR } from '../../../support/cloud-harness.js'
import { postgresAvailability } from '../../../support/services.js'
import {
  expectInvalidToken,
  expectOAuthError,
  getEmployees,
  INTROSPECT,
  issueToken,
  oauthPost,
  REVOKE,
  type TestClient,
  TOKEN,
} from './conformance-support.js'

// Throws under HAJRI_TEST_REQUIRE_ALL=1 when PostgreSQL is absent, so CI cannot skip this.
const postgres = await postgresAvailability()

interface Instance {
  handle: DatabaseHandle
  app: FastifyInstance
  services: Services
}

async function startInstance(url: string): Promise<Instance> {
  const handle = openDatabase(url, { poolSize: 2 })
  const app = await buildApp({
    config: {
      bodyLimitBytes: 1024 * 1024,
      trustProxy: false,
      logLevel: 'silent',
      oauthRateLimitPerIp: 1_000_000,
      oauthRateLimitPerClient: 1_000_000,
    },
    database: handle,
    logger: false,
    closeDatabase: false,
  })
  await app.ready()
  return { handle, app, services: createServices(handle) }
}

describe.skipIf(postgres.skipReason !== undefined)(
  `revocation across two cloud instances sharing PostgreSQL${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let drop: () => Promise<void>
    let a: Instance
    let b: Instance
    let tenantId: string

    beforeAll(async () => {
      const database = await createTestDatabaseUrl('postgres')
      drop = database.drop
      a = await startInstance(database.url)
      await migrateToLatest(a.handle.db)
      b = await startInstance(database.url)
      const created = await b.services.tenants.create({ name: 'Shared', adminEmail: 'owner@example.test' })
      tenantId = created.tenantId
    })

    afterAll(async () => {
      for (const instance of [a, b]) {
        await instance?.app.close()
        await instance?.handle.close()
      }
      await drop?.()
    })

    const createClient = (scopes: ['employees:read']): Promise<TestClient> =>
      b.services.oauthApps.create(
        tenantId,
        { name: 'shared', scopes, rateLimitPerMinute: 100_000 },
        TEST_ACTOR,
      )

    it('runs on two separate connection pools over one schema', () => {
      expect(a.handle).not.toBe(b.handle)
      expect(a.handle.dialect).toBe('postgres')
      expect(b.handle.describe).toBe(a.handle.describe)
    })

    it('refuses an API key on A at once after B revokes it', async () => {
      const key = await b.services.apiKeys.create(
        tenantId,
        { scopes: ['employees:read'], rateLimitPerMinute: 100_000 },
        TEST_ACTOR,
      )
      expect((await getEmployees(a.app, key.key)).statusCode).toBe(200)
      expect((await getEmployees(a.app, key.key)).statusCode).toBe(200)
      await b.services.apiKeys.revoke(tenantId, key.id, TEST_ACTOR)
      expectInvalidToken(await getEmployees(a.app, key.key))
    })

    it('refuses an access token on A at once after B’s revocation endpoint revokes it', async () => {
      const client = await createClient(['employees:read'])
      const { access_token } = await issueToken(a.app, client)
      expect((await getEmployees(a.app, access_token)).statusCode).toBe(200)
      expect((await getEmployees(b.app, access_token)).statusCode).toBe(200)
      const revoked = await oauthPost(b.app, REVOKE, {
        params: { token: access_token },
        client: { auth: 'basic', client },
      })
      expect(revoked.statusCode, revoked.body).toBe(200)
      expectInvalidToken(await getEmployees(a.app, access_token))
      const introspected = await oauthPost(a.app, INTROSPECT, {
        params: { token: access_token },
        client: { auth: 'basic', client },
      })
      expect(introspected.json()).toEqual({ active: false })
    })

    it('ends on A every token of an app that B revokes, and A issues it no more', async () => {
      const client = await createClient(['employees:read'])
      const tokens = [await issueToken(a.app, client), await issueToken(b.app, client)]
      for (const t of tokens) expect((await getEmployees(a.app, t.access_token)).statusCode).toBe(200)
      await b.services.oauthApps.revoke(tenantId, client.id, TEST_ACTOR)
      for (const t of tokens) expectInvalidToken(await getEmployees(a.app, t.access_token))
      const refused = await oauthPost(a.app, TOKEN, {
        params: { grant_type: 'client_credentials' },
        client: { auth: 'basic', client },
      })
      expectOAuthError(refused, 401, 'invalid_client')
    })

    it('refuses on A an old client secret that B rotated with no grace', async () => {
      const client = await createClient(['employees:read'])
      await issueToken(a.app, client)
      const rotated = await b.services.oauthApps.rotateSecret(tenantId, client.id, TEST_ACTOR, 0)
      const old = await oauthPost(a.app, TOKEN, {
        params: { grant_type: 'client_credentials' },
        client: { auth: 'basic', client },
      })
      expectOAuthError(old, 401, 'invalid_client')
      await issueToken(a.app, { ...client, clientSecret: rotated.clientSecret })
    })
  },
)
