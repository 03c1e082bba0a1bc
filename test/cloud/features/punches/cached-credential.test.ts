import { beforeAll, describe, expect, it, vi } from 'vitest'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../../cloud/features/bearer-auth/credential-settings.js'
import type { Scope } from '../../../../shared/scopes.js'
import { formatTimestamp, nowMicros } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee, TEST_ACTOR } from '../../../support/cloud-harness.js'

/**
 * The single punch route may take its caller's credential from the cache of recent lookups, without
 * asking the database anything first: the insert checks in its own statement that the credential is
 * still live (docs/decisions/0091-credential-cache-checked-by-the-write.md on PostgreSQL,
 * docs/decisions/0093-sqlite-single-punch-checks-its-credential.md on SQLite). Whatever the cache holds, a
 * credential revoked or expired since, or an OAuth app revoked, is refused on the very next request,
 * on every path of the route (a new punch, a replay, an Idempotency-Key, a manual punch), and stores
 * nothing. Revocations go through the services, not this app's routes, as another instance would
 * make them: nothing tells this instance's cache.
 */
describeEachDatabase('the single punch route with cached credentials', (cloud) => {
  let tenantId: string
  const PUNCHES = '/api/public/v1/attendance/punches'
  const WRITE: Scope[] = ['attendance:read', 'attendance:write']

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
  })

  let n = 0
  const punch = (extra: Record<string, unknown> = {}) => ({
    employeeCode: 'E001',
    punchType: 'IN',
    punchedAt: formatTimestamp(nowMicros() - 60_000_000),
    externalId: `cached-${cloud.kind}-${++n}`,
    ...extra,
  })
  const post = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    cloud.app.inject({
      method: 'POST',
      url: PUNCHES,
      headers: { ...bearer(token), ...headers },
      payload: body,
    })
  const stored = async (externalId: string) =>
    (
      await cloud.database.db
        .selectFrom('punches')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('external_id', '=', externalId)
        .execute()
    ).length
  const newKey = async (scopes: Scope[] = WRITE, expiresInSeconds?: number) =>
    cloud.services.apiKeys.create(
      tenantId,
      {
        scopes,
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
        ...(expiresInSeconds ? { expiresInSeconds } : {}),
      },
      TEST_ACTOR,
    )

  it('looks an API key up once while it is cached; on PostgreSQL routes that do not check it look it up every time', async () => {
    const { key } = await newKey()
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    try {
      for (let i = 0; i < 3; i++) expect((await post(key, punch())).statusCode).toBe(201)
      // The first lookup records the key's first use: bookkeeping, which on SQLite does not count
      // as a change of credentials (decision 0093), so that lookup is kept.
      expect(lookups).toHaveBeenCalledTimes(1)
      // The punch log's page checks the cached key in its own statement (decision 0094).
      const page = await cloud.app.inject({ method: 'GET', url: `${PUNCHES}?limit=1`, headers: bearer(key) })
      expect(page.statusCode).toBe(200)
      expect(lookups).toHaveBeenCalledTimes(1)
      const id = (page.json() as { data: { id: string }[] }).data[0]?.id
      const read = await cloud.app.inject({ method: 'GET', url: `${PUNCHES}/${id}`, headers: bearer(key) })
      expect(read.statusCode).toBe(200)
      // On SQLite that read is answered from the cache too, since the database says nothing changed (0092).
      expect(lookups).toHaveBeenCalledTimes(cloud.kind === 'postgres' ? 2 : 1)
    } finally {
      lookups.mockRestore()
    }
  })

  it('refuses a revoked API key on every path of the route, storing nothing', async () => {
    const created = await newKey(['attendance:read', 'attendance:write', 'attendance:admin'])
    const first = punch()
    // Cached by several requests, of a new punch and of a replay.
    expect((await post(created.key, first)).statusCode).toBe(201)
    expect((await post(created.key, punch())).statusCode).toBe(201)
    expect((await post(created.key, first)).statusCode).toBe(201)
    await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)

    const attempts: { body: Record<string, unknown>; headers: Record<string, string> }[] = [
      { body: punch(), headers: {} },
      { body: punch(), headers: { 'idempotency-key': `revoked-${cloud.kind}` } },
      {
        body: punch({ source: 'manual', reason: 'forgot to punch' }),
        headers: {},
      },
    ]
    for (const { body, headers } of attempts) {
      const res = await post(created.key, body, headers)
      expect(res.statusCode, res.body).toBe(401)
      expect(res.json()).toMatchObject({ code: 'invalid_credential' })
      expect(res.headers['www-authenticate']).toContain('invalid_token')
      expect(await stored(String(body.externalId))).toBe(0)
    }
    // A replay of a punch it stored while live is refused too, and leaves the one copy.
    expect((await post(created.key, first)).statusCode).toBe(401)
    expect(await stored(first.externalId)).toBe(1)
  })

  it('refuses an API key that expired while cached', async () => {
    const { key } = await newKey(WRITE, 60)
    expect((await post(key, punch())).statusCode).toBe(201)
    cloud.fixedNow = nowMicros() + 61_000_000
    try {
      const late = punch({ punchedAt: formatTimestamp(nowMicros() + 60_000_000) })
      expect((await post(key, late)).statusCode).toBe(401)
      expect(await stored(late.externalId)).toBe(0)
    } finally {
      cloud.fixedNow = undefined
    }
  })

  describe('OAuth access tokens', () => {
    const grant = () => cloud.grantAccessToken(tenantId, WRITE, `cached ${++n}`)

    it('refuses a revoked access token on the next request', async () => {
      const { app, token } = await grant()
      expect((await post(token, punch())).statusCode).toBe(201)
      expect((await post(token, punch())).statusCode).toBe(201)
      const client = await cloud.services.oauthApps.authenticateClient(app.clientId, app.clientSecret)
      if (!client) throw new Error('the client does not authenticate')
      await cloud.services.tokens.revoke(client, token, null)
      const refused = punch()
      expect((await post(token, refused)).statusCode).toBe(401)
      expect(await stored(refused.externalId)).toBe(0)
    })

    it('refuses every token of a revoked app on the next request', async () => {
      const { app, token } = await grant()
      expect((await post(token, punch())).statusCode).toBe(201)
      expect((await post(token, punch())).statusCode).toBe(201)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      const refused = punch()
      expect((await post(token, refused)).statusCode).toBe(401)
      expect(await stored(refused.externalId)).toBe(0)
    })
  })

  it("reads a punch with the tenant's time zone as it is now, not as it was cached", async () => {
    const zoned = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    await cloud.upsertEmployees(zoned, [employee('Z001')])
    const key = await cloud.createApiKey(zoned, WRITE)
    const at = formatTimestamp(nowMicros() - 60_000_000)
    const first = await post(key, { employeeCode: 'Z001', punchType: 'IN', punchedAt: at })
    expect(first.statusCode).toBe(201)
    expect(first.json().punchedAt).toMatch(/\+05:30$/)
    await cloud.database.db
      .updateTable('tenants')
      .set({ time_zone: 'Asia/Dubai' })
      .where('id', '=', zoned)
      .execute()
    const second = await post(key, { employeeCode: 'Z001', punchType: 'OUT', punchedAt: at })
    expect(second.statusCode).toBe(201)
    expect(second.json().punchedAt).toMatch(/\+04:00$/)
  })

  describe('the punch log read (decision 0094)', () => {
    const page = (token: string, query = 'limit=5') =>
      cloud.app.inject({ method: 'GET', url: `${PUNCHES}?${query}`, headers: bearer(token) })

    it('refuses a revoked API key and a revoked access token on the next page', async () => {
      const created = await newKey()
      const { app, token } = await cloud.grantAccessToken(tenantId, WRITE, `cached log ${++n}`)
      for (const t of [created.key, token]) {
        expect((await post(t, punch())).statusCode).toBe(201)
        expect((await page(t)).statusCode).toBe(200)
      }
      await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      for (const t of [created.key, token]) {
        const res = await page(t)
        expect(res.statusCode, res.body).toBe(401)
        expect(res.json()).toMatchObject({ code: 'invalid_credential' })
      }
    })

    it("shows punches in the tenant's time zone as it is now, and answers an empty page", async () => {
      const zoned = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
      await cloud.upsertEmployees(zoned, [employee('Z001')])
      const key = await cloud.createApiKey(zoned, WRITE)
      const at = formatTimestamp(nowMicros() - 60_000_000)
      expect((await post(key, { employeeCode: 'Z001', punchType: 'IN', punchedAt: at })).statusCode).toBe(201)
      const before = await page(key)
      expect(before.json().data[0].punchedAt).toMatch(/\+05:30$/)
      await cloud.database.db
        .updateTable('tenants')
        .set({ time_zone: 'Asia/Dubai' })
        .where('id', '=', zoned)
        .execute()
      const after = await page(key)
      expect(after.statusCode).toBe(200)
      expect(after.json().data[0].punchedAt).toMatch(/\+04:00$/)
      const empty = await page(key, 'employeeCode=NOBODY')
      expect(empty.statusCode, empty.body).toBe(200)
      expect(empty.json()).toEqual({ data: [], nextCursor: null })
    })

    it("reads only the caller's tenant", async () => {
      const other = await cloud.createTenant()
      await cloud.upsertEmployees(other, [employee('E001')])
      const otherKey = await cloud.createApiKey(other, WRITE)
      const mine = punch()
      expect((await post(otherKey, mine)).statusCode).toBe(201)
      const listed = (await page(otherKey, 'limit=200')).json() as { data: { externalId: string }[] }
      expect(listed.data.map((p) => p.externalId)).toEqual([mine.externalId])
    })
  })
})
