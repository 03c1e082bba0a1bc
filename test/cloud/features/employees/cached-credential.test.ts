import { beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../../cloud/features/bearer-auth/credential-settings.js'
import type { Scope } from '../../../../shared/scopes.js'
import { nowMicros } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee, TEST_ACTOR } from '../../../support/cloud-harness.js'

/**
 * The employee reads of the public API may take their caller's credential from the cache of recent
 * lookups, without asking the database anything first: the read's own statement checks that the
 * credential is still live (docs/decisions/0094-reads-check-a-cached-credential.md). Whatever the
 * cache holds, a credential revoked or expired since, or an OAuth app revoked, is refused on the very
 * next read. Revocations go through the services, not this app's routes, as another instance would
 * make them: nothing tells this instance's cache.
 */
describeEachDatabase('employee reads with cached credentials', (cloud) => {
  let tenantId: string
  const EMPLOYEES = '/api/public/v1/employees'
  const READ: Scope[] = ['employees:read']
  // The two reads that check a cached credential in their statement: one employee, and a page.
  const reads = [`${EMPLOYEES}/E001`, `${EMPLOYEES}?limit=1`]

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001'), employee('E002')])
  })

  const get = (token: string, url: string) => cloud.app.inject({ method: 'GET', url, headers: bearer(token) })
  const newKey = async (scopes: Scope[] = READ, expiresInSeconds?: number) =>
    cloud.services.apiKeys.create(
      tenantId,
      {
        scopes,
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
        ...(expiresInSeconds ? { expiresInSeconds } : {}),
      },
      TEST_ACTOR,
    )
  const expectRefused = async (token: string) => {
    for (const url of reads) {
      const res = await get(token, url)
      expect(res.statusCode, `${url}: ${res.body}`).toBe(401)
      expect(res.json()).toMatchObject({ code: 'invalid_credential' })
      expect(res.headers['www-authenticate']).toContain('invalid_token')
    }
  }

  it('looks an API key up once while it is cached, and answers as a lookup would', async () => {
    const { key } = await newKey()
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    try {
      const first = await get(key, reads[0] as string)
      for (let i = 0; i < 3; i++) {
        for (const url of reads) expect((await get(key, url)).statusCode).toBe(200)
      }
      // The first lookup records the key's first use; every read after it took the cached caller.
      expect(lookups).toHaveBeenCalledTimes(1)
      expect(first.json()).toMatchObject({ employeeCode: 'E001' })
      expect((await get(key, reads[0] as string)).json()).toEqual(first.json())
      const page = (await get(key, `${EMPLOYEES}?limit=1`)).json() as { data: unknown[]; nextCursor: unknown }
      expect(page.data).toHaveLength(1)
      expect(typeof page.nextCursor).toBe('string')
    } finally {
      lookups.mockRestore()
    }
  })

  it('answers 404 for an employee that does not exist, and an empty page, to a live cached caller', async () => {
    const { key } = await newKey()
    expect((await get(key, reads[0] as string)).statusCode).toBe(200)
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    try {
      const missing = await get(key, `${EMPLOYEES}/NOBODY`)
      expect(missing.statusCode, missing.body).toBe(404)
      expect(missing.json()).toMatchObject({ code: 'employee_not_found' })
      const empty = await get(key, `${EMPLOYEES}?status=INACTIVE`)
      expect(empty.statusCode, empty.body).toBe(200)
      expect(empty.json()).toEqual({ data: [], nextCursor: null })
      // Finding nothing, each read had the key verified to tell why, then read again: a lookup on
      // PostgreSQL; on SQLite the database says nothing changed since the key was cached (0092).
      expect(lookups).toHaveBeenCalledTimes(cloud.kind === 'postgres' ? 2 : 0)
    } finally {
      lookups.mockRestore()
    }
  })

  it('refuses a revoked API key on the next read', async () => {
    const created = await newKey()
    for (const url of reads) expect((await get(created.key, url)).statusCode).toBe(200)
    await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)
    await expectRefused(created.key)
  })

  it('refuses an API key that expired while cached', async () => {
    const { key } = await newKey(READ, 60)
    for (const url of reads) expect((await get(key, url)).statusCode).toBe(200)
    cloud.fixedNow = nowMicros() + 61_000_000
    try {
      await expectRefused(key)
    } finally {
      cloud.fixedNow = undefined
    }
  })

  it('refuses a cached key without the scope, and reads nothing for it', async () => {
    const { key } = await newKey(['attendance:read'])
    const res = await get(key, `${EMPLOYEES}/E001`)
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ code: 'insufficient_scope' })
    expect((await get(key, `${EMPLOYEES}/E001`)).statusCode).toBe(403)
  })

  it("reads only the caller's tenant, though another's key is cached", async () => {
    const other = await cloud.createTenant()
    await cloud.upsertEmployees(other, [employee('X001')])
    const otherKey = await cloud.createApiKey(other, READ)
    expect((await get(otherKey, `${EMPLOYEES}/X001`)).statusCode).toBe(200)
    expect((await get(otherKey, `${EMPLOYEES}/E001`)).statusCode).toBe(404)
    const page = (await get(otherKey, `${EMPLOYEES}?limit=50`)).json() as { data: { employeeCode: string }[] }
    expect(page.data.map((e) => e.employeeCode)).toEqual(['X001'])
  })

  describe('OAuth access tokens', () => {
    let n = 0
    const grant = () => cloud.grantAccessToken(tenantId, READ, `cached read ${++n}`)

    it('refuses a revoked access token on the next read', async () => {
      const { app, token } = await grant()
      for (const url of reads) expect((await get(token, url)).statusCode).toBe(200)
      const client = await cloud.services.oauthApps.authenticateClient(app.clientId, app.clientSecret)
      if (!client) throw new Error('the client does not authenticate')
      await cloud.services.tokens.revoke(client, token, null)
      await expectRefused(token)
    })

    it('refuses every token of a revoked app on the next read', async () => {
      const { app, token } = await grant()
      for (const url of reads) expect((await get(token, url)).statusCode).toBe(200)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      await expectRefused(token)
    })
  })
})
