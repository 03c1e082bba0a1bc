import { beforeAll, expect, it, vi } from 'vitest'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../../cloud/features/bearer-auth/credential-settings.js'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee, TEST_ACTOR } from '../../../support/cloud-harness.js'

/**
 * The list of attendance days, which payroll syncs, may take its caller's credential from the cache
 * of recent lookups: the page's own statement checks that the credential is still live, and that
 * the tenant's time zone is the one the cache has
 * (docs/decisions/0094-reads-check-a-cached-credential.md). Revocations go through the services,
 * as another instance would make them: nothing tells this instance's cache.
 */
describeEachDatabase('the attendance day list with cached credentials', (cloud) => {
  const DAYS = '/api/public/v1/attendance/days'
  const RANGE = 'from=2026-11-23&to=2026-11-24'
  let tenantId: string

  beforeAll(async () => {
    cloud.fixedNow = parseTimestamp('2026-11-25T12:00:00+05:30')
    tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    await cloud.upsertEmployees(tenantId, [employee('E1')])
    const writer = await cloud.createApiKey(tenantId, ['attendance:write'])
    for (const [punchType, punchedAt] of [
      ['IN', '2026-11-23T09:05:00+05:30'],
      ['OUT', '2026-11-23T18:10:00+05:30'],
    ] as const) {
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/api/public/v1/attendance/punches',
        headers: bearer(writer),
        payload: { employeeCode: 'E1', punchType, punchedAt },
      })
      expect(res.statusCode, res.body).toBe(201)
    }
    await cloud.attendanceRounds()
    return () => {
      cloud.fixedNow = undefined
    }
  })

  const page = (token: string, query = RANGE) =>
    cloud.app.inject({ method: 'GET', url: `${DAYS}?${query}`, headers: bearer(token) })

  it('looks a key up once while it is cached, and refuses it on the next page once revoked', async () => {
    const reader = await cloud.services.apiKeys.create(
      tenantId,
      { scopes: ['attendance:read'], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
      TEST_ACTOR,
    )
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    try {
      for (let i = 0; i < 3; i++) {
        const res = await page(reader.key)
        expect(res.statusCode, res.body).toBe(200)
        expect(
          (res.json() as { data: { employeeCode: string }[] }).data.map((d) => d.employeeCode),
        ).toContain('E1')
      }
      expect(lookups).toHaveBeenCalledTimes(1)
    } finally {
      lookups.mockRestore()
    }
    await cloud.services.apiKeys.revoke(tenantId, reader.id, TEST_ACTOR)
    const refused = await page(reader.key)
    expect(refused.statusCode, refused.body).toBe(401)
    expect(refused.json()).toMatchObject({ code: 'invalid_credential' })
  })

  it('refuses every token of a revoked OAuth app on the next page', async () => {
    const { app, token } = await cloud.grantAccessToken(tenantId, ['attendance:read'], 'payroll days')
    expect((await page(token)).statusCode).toBe(200)
    expect((await page(token)).statusCode).toBe(200)
    await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
    expect((await page(token)).statusCode).toBe(401)
  })

  it('answers an empty page, and looks the key up again once the time zone changes', async () => {
    const key = await cloud.createApiKey(tenantId, ['attendance:read'])
    expect((await page(key)).statusCode).toBe(200)
    const empty = await page(key, `${RANGE}&employeeCode=NOBODY`)
    expect(empty.statusCode, empty.body).toBe(200)
    expect(empty.json()).toEqual({ data: [], nextCursor: null })
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    try {
      await cloud.database.db
        .updateTable('tenants')
        .set({ time_zone: 'Asia/Dubai' })
        .where('id', '=', tenantId)
        .execute()
      expect((await page(key)).statusCode).toBe(200)
      // The cached time zone no longer matched: the page's check found nothing, and the key was
      // looked up again to read the page with the tenant as it is now.
      expect(lookups).toHaveBeenCalledTimes(1)
    } finally {
      lookups.mockRestore()
      await cloud.database.db
        .updateTable('tenants')
        .set({ time_zone: 'Asia/Kolkata' })
        .where('id', '=', tenantId)
        .execute()
    }
  })

  it("reads only the caller's tenant", async () => {
    const other = await cloud.createTenant({ timeZone: 'Asia/Kolkata' })
    const otherKey = await cloud.createApiKey(other, ['attendance:read'])
    for (let i = 0; i < 2; i++) {
      const res = await page(otherKey)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ data: [], nextCursor: null })
    }
  })
})
