/**
 * A security review attacked the token endpoint:
 * - #2: anyone who knew a client id could keep that client from getting tokens. The per-client
 *   limit counted every request naming the client id before the secret was checked, so 60
 *   wrong-secret requests a minute from another address kept the real client at 429 for ever,
 *   and a site agent's punches piled up in its spool. Client ids are not secret.
 * - Info: the endpoint did less work for an unknown client id than for a known one (no secrets
 *   query, no comparison), about 0.1 ms a request, which tells which client ids exist.
 */
import * as crypto from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, expect, it, vi } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { OAuthAppStore } from '../../../cloud/features/oauth/app-store.js'
import { describeEachDatabase, TEST_ACTOR } from '../../support/cloud-harness.js'
import { someAddress } from '../features/sessions/session-kit.js'
import { OAUTH } from './security-kit.js'

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})

describeEachDatabase('security review: the token endpoint', (cloud) => {
  const apps: FastifyInstance[] = []
  afterAll(async () => {
    for (const app of apps) await app.close()
  })
  afterEach(() => {
    vi.restoreAllMocks()
    vi.mocked(crypto.timingSafeEqual).mockClear()
  })

  async function appWith(perClient: number) {
    const app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: 1_000_000,
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

  const token = (app: FastifyInstance, clientId: string, secret: string, remoteAddress: string) =>
    app.inject({
      method: 'POST',
      url: `${OAUTH}/token`,
      remoteAddress,
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    })

  it('security review #2: wrong secrets from elsewhere never keep the client with the right secret from its tokens', async () => {
    const app = await appWith(60)
    const tenantId = await cloud.createTenant()
    const agent = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'pune agent', scopes: ['attendance:write'] },
      TEST_ACTOR,
    )
    const agentAddress = someAddress()
    // The attacker knows the client id (it is in the site's agent.yaml) and sends wrong secrets:
    // 60 a minute from one address, as the review did, then from many more.
    const attacker = someAddress()
    for (let i = 0; i < 80; i++) {
      const res = await token(app, agent.clientId, `hjs_wrong${i}`, attacker)
      expect([401, 429]).toContain(res.statusCode)
      if (i % 10 === 0) {
        const own = await token(app, agent.clientId, agent.clientSecret, agentAddress)
        expect(own.statusCode, `the agent, after ${i + 1} wrong secrets from elsewhere: ${own.body}`).toBe(
          200,
        )
      }
    }
    for (let i = 0; i < 60; i++) await token(app, agent.clientId, `hjs_spread${i}`, someAddress())
    const own = await token(app, agent.clientId, agent.clientSecret, agentAddress)
    expect(own.statusCode, own.body).toBe(200)
    expect(own.json().access_token).toMatch(/^hja_/)
    // The attacker's address is the one that is stopped.
    expect((await token(app, agent.clientId, 'hjs_wrong', attacker)).statusCode).toBe(429)
  })

  it('security review (info): an unknown client id costs the same lookups and comparisons as a known one', async () => {
    const app = await appWith(1_000_000)
    const tenantId = await cloud.createTenant()
    const known = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'known', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const secretsLookups = vi.spyOn(OAuthAppStore.prototype, 'liveSecrets')
    const compare = vi.mocked(crypto.timingSafeEqual)
    const work = async (clientId: string) => {
      secretsLookups.mockClear()
      compare.mockClear()
      const res = await token(app, clientId, 'hjs_not-the-secret', someAddress())
      expect(res.statusCode).toBe(401)
      return { lookups: secretsLookups.mock.calls.length, comparisons: compare.mock.calls.length }
    }
    const forKnown = await work(known.clientId)
    const forUnknown = await work('hjc_nobodyHasThisClientId0000')
    expect(forKnown.comparisons).toBeGreaterThan(0)
    expect(forUnknown).toEqual(forKnown)
  })
})
