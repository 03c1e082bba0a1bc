/**
 * Security review #14: with Redis unreachable, rate limits fail
 * open (as documented), but every answer still carried `RateLimit-*` headers promising a limit: a
 * key limited to 5 got 8 answers of 200, each with `ratelimit-remaining: 5`. While limits are not
 * kept, no answer may claim one. (What is off while Redis is away is listed in docs/operators/production.md.)
 */
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { openRedis } from '../../../cloud/db/redis.js'
import { bearer, TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { unusedPort } from '../../support/unused-port.js'
import { OAUTH, PUBLIC } from './security-kit.js'

describe('with Redis unreachable, no answer promises a rate limit', () => {
  const cloud = new TestCloud('sqlite')
  let app: FastifyInstance
  let redis: Redis

  beforeAll(async () => {
    await cloud.start()
    redis = openRedis(`redis://127.0.0.1:${await unusedPort()}`, () => {})
    app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: 5,
        oauthRateLimitPerClient: 5,
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

  it('security review #14: serves an API key past its limit of 5 without RateLimit headers', async () => {
    const tenantId = await cloud.createTenant()
    const { key } = await cloud.services.apiKeys.create(
      tenantId,
      { name: 'five a minute', scopes: ['employees:read'], rateLimitPerMinute: 5 },
      TEST_ACTOR,
    )
    for (let i = 0; i < 8; i++) {
      const res = await app.inject({ method: 'GET', url: `${PUBLIC}/employees`, headers: bearer(key) })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['ratelimit-limit'], `answer ${i + 1}`).toBeUndefined()
      expect(res.headers['ratelimit-remaining'], `answer ${i + 1}`).toBeUndefined()
      expect(res.headers['ratelimit-reset'], `answer ${i + 1}`).toBeUndefined()
    }
    expect(redis.status).not.toBe('ready')
  })

  it('security review #14: answers the token endpoint without RateLimit headers', async () => {
    const tenantId = await cloud.createTenant()
    const client = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'agent', scopes: ['attendance:write'] },
      TEST_ACTOR,
    )
    for (let i = 0; i < 7; i++) {
      const res = await app.inject({
        method: 'POST',
        url: `${OAUTH}/token`,
        payload: {
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['ratelimit-limit']).toBeUndefined()
    }
  })
})
