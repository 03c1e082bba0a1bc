import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../../../cloud/app-error.js'
import { hashApiKey } from '../../../../cloud/features/api-keys/api-key-format.js'
import {
  DEFAULT_API_KEY_TTL_SECONDS,
  MAX_API_KEY_TTL_SECONDS,
} from '../../../../cloud/features/api-keys/service.js'
import { problemStatus } from '../../../../shared/problem.js'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'

const EMPLOYEES = '/api/public/v1/employees'
const SECOND = 1_000_000
const DAY = 86_400 * SECOND

/** The AppError a promise rejects with, so a test can check its code and detail. */
async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(AppError)
  return err as AppError
}

describeEachDatabase('API key lifecycle', (cloud: TestCloud) => {
  let tenantId: string
  let otherTenantId: string

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    otherTenantId = await cloud.createTenant()
  })

  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const getEmployees = (key: string) =>
    cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(key) })

  const create = (options: { expiresInSeconds?: number; name?: string } = {}, tenant = tenantId) =>
    cloud.services.apiKeys.create(tenant, { scopes: ['employees:read'], ...options }, TEST_ACTOR)

  const summary = async (id: string, tenant = tenantId) => {
    const found = (await cloud.services.apiKeys.list(tenant)).find((k) => k.id === id)
    if (!found) throw new Error(`key ${id} not listed`)
    return found
  }

  const auditEntries = async (targetId: string) =>
    (await cloud.services.audit.list(tenantId, { targetId, limit: 200 })).data

  describe('expiry', () => {
    it('defaults to 90 days from creation', async () => {
      expect(DEFAULT_API_KEY_TTL_SECONDS).toBe(90 * 86_400)
      const t = nowMicros()
      cloud.fixedNow = t
      const created = await create()
      expect(created.expiresAt).toBe(formatServerTime(t + 90 * DAY))
      expect((await summary(created.id)).expiresAt).toBe(created.expiresAt)
    })

    it('accepts exactly 2 years and refuses a second more, or under a minute', async () => {
      expect(MAX_API_KEY_TTL_SECONDS).toBe(2 * 365 * 86_400)
      const t = nowMicros()
      cloud.fixedNow = t
      const longest = await create({ expiresInSeconds: MAX_API_KEY_TTL_SECONDS })
      expect(longest.expiresAt).toBe(formatServerTime(t + 2 * 365 * DAY))
      const shortest = await create({ expiresInSeconds: 60 })
      expect(shortest.expiresAt).toBe(formatServerTime(t + 60 * SECOND))

      const before = await cloud.services.apiKeys.list(tenantId)
      for (const ttl of [MAX_API_KEY_TTL_SECONDS + 1, 10 * 365 * 86_400, 59, 0, -60, 3600.5]) {
        const err = await rejection(create({ expiresInSeconds: ttl }))
        expect(err.code, String(ttl)).toBe('validation_failed')
        expect(err.detail, String(ttl)).toContain('expiry')
      }
      // A refused key leaves nothing behind.
      expect(await cloud.services.apiKeys.list(tenantId)).toHaveLength(before.length)
    })

    it('is honoured by the API: accepted until the expiry, refused from it on', async () => {
      const t = nowMicros()
      cloud.fixedNow = t
      const created = await create({ expiresInSeconds: 3600 })
      cloud.fixedNow = t + 3600 * SECOND - 1
      expect((await getEmployees(created.key)).statusCode).toBe(200)
      cloud.fixedNow = t + 3600 * SECOND
      const refused = await getEmployees(created.key)
      expect(refused.statusCode).toBe(401)
      expect(refused.json()).toMatchObject({ code: 'invalid_credential' })
      // Expired is final: moving further on does not bring it back.
      cloud.fixedNow = t + 30 * DAY
      expect((await getEmployees(created.key)).statusCode).toBe(401)
    })
  })

  describe('revocation', () => {
    it('refuses a key on the very next request after revoke', async () => {
      const created = await create()
      expect((await getEmployees(created.key)).statusCode).toBe(200)
      const revoked = await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)
      expect(revoked).toMatchObject({ id: created.id, status: 'revoked', revokedAt: expect.any(String) })
      const next = await getEmployees(created.key)
      expect(next.statusCode).toBe(401)
      expect(next.json()).toMatchObject({ code: 'invalid_credential' })
      expect(await cloud.services.authenticator.authenticate(created.key)).toBeUndefined()
    })

    it('is idempotent: a second revoke keeps the first time and writes no second audit entry', async () => {
      const t = nowMicros()
      cloud.fixedNow = t
      const created = await create()
      const first = await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)
      expect(first.revokedAt).toBe(formatServerTime(t))
      cloud.fixedNow = t + 5 * SECOND
      const second = await cloud.services.apiKeys.revoke(tenantId, created.id, TEST_ACTOR)
      expect(second.status).toBe('revoked')
      expect(second.revokedAt).toBe(formatServerTime(t))
      expect((await summary(created.id)).revokedAt).toBe(formatServerTime(t))
      const revocations = (await auditEntries(created.id)).filter((e) => e.action === 'api_key.revoked')
      expect(revocations).toHaveLength(1)
    })

    it("answers api_key_not_found for another tenant's key, and leaves that key working", async () => {
      const theirs = await create({}, otherTenantId)
      const err = await rejection(cloud.services.apiKeys.revoke(tenantId, theirs.id, TEST_ACTOR))
      expect(err.code).toBe('api_key_not_found')
      expect(problemStatus(err.code)).toBe(404)
      expect((await summary(theirs.id, otherTenantId)).status).toBe('active')
      expect((await getEmployees(theirs.key)).statusCode).toBe(200)
      // Nor is the attempt written to either tenant's log as a revocation.
      const theirLog = await cloud.services.audit.list(otherTenantId, { targetId: theirs.id })
      expect(theirLog.data.map((e) => e.action)).toEqual(['api_key.created'])
      expect(await auditEntries(theirs.id)).toEqual([])
    })

    it('answers api_key_not_found for an id that was never issued', async () => {
      const err = await rejection(
        cloud.services.apiKeys.revoke(tenantId, 'key_00000000000000000000000000', TEST_ACTOR),
      )
      expect(err.code).toBe('api_key_not_found')
    })
  })

  describe('lastUsedAt', () => {
    it('is null until the key is used, then set to the time of use', async () => {
      const t = nowMicros()
      cloud.fixedNow = t
      const created = await create()
      expect((await summary(created.id)).lastUsedAt).toBeNull()
      cloud.fixedNow = t + 10 * SECOND
      expect((await getEmployees(created.key)).statusCode).toBe(200)
      expect((await summary(created.id)).lastUsedAt).toBe(formatServerTime(t + 10 * SECOND))
    })

    it('is kept to the minute: not rewritten by uses within a minute, rewritten after one', async () => {
      const t = nowMicros()
      cloud.fixedNow = t
      const created = await create()
      expect((await getEmployees(created.key)).statusCode).toBe(200)
      const storedLastUsed = async () =>
        (
          await cloud.database.db
            .selectFrom('api_keys')
            .select('last_used_at')
            .where('id', '=', created.id)
            .executeTakeFirstOrThrow()
        ).last_used_at
      expect(await storedLastUsed()).toBe(t)

      for (const offset of [1, 30, 59, 60]) {
        cloud.fixedNow = t + offset * SECOND
        expect((await getEmployees(created.key)).statusCode).toBe(200)
        expect(await storedLastUsed(), `${offset} s later`).toBe(t)
      }
      cloud.fixedNow = t + 61 * SECOND
      expect((await getEmployees(created.key)).statusCode).toBe(200)
      expect(await storedLastUsed()).toBe(t + 61 * SECOND)
      expect((await summary(created.id)).lastUsedAt).toBe(formatServerTime(t + 61 * SECOND))
    })

    it('is not set by a refused use (expired or revoked key)', async () => {
      const t = nowMicros()
      cloud.fixedNow = t
      const expiring = await create({ expiresInSeconds: 60 })
      const revoked = await create()
      await cloud.services.apiKeys.revoke(tenantId, revoked.id, TEST_ACTOR)
      cloud.fixedNow = t + 120 * SECOND
      expect((await getEmployees(expiring.key)).statusCode).toBe(401)
      expect((await getEmployees(revoked.key)).statusCode).toBe(401)
      expect((await summary(expiring.id)).lastUsedAt).toBeNull()
      expect((await summary(revoked.id)).lastUsedAt).toBeNull()
    })
  })

  describe('list', () => {
    it('shows each key as active, expired or revoked, without its secret', async () => {
      const tenant = await cloud.createTenant()
      const t = nowMicros()
      cloud.fixedNow = t
      const active = await create({ name: 'active' }, tenant)
      const expiring = await create({ name: 'expiring', expiresInSeconds: 60 }, tenant)
      const revoked = await create({ name: 'revoked' }, tenant)
      const revokedAndExpired = await create({ name: 'both', expiresInSeconds: 60 }, tenant)
      await cloud.services.apiKeys.revoke(tenant, revoked.id, TEST_ACTOR)
      await cloud.services.apiKeys.revoke(tenant, revokedAndExpired.id, TEST_ACTOR)

      const statuses = async () =>
        Object.fromEntries((await cloud.services.apiKeys.list(tenant)).map((k) => [k.name, k.status]))
      expect(await statuses()).toEqual({
        active: 'active',
        expiring: 'active',
        revoked: 'revoked',
        both: 'revoked',
      })
      cloud.fixedNow = t + 60 * SECOND
      expect(await statuses()).toEqual({
        active: 'active',
        expiring: 'expired',
        revoked: 'revoked',
        both: 'revoked',
      })

      const listed = await cloud.services.apiKeys.list(tenant)
      expect(listed.map((k) => k.id)).toEqual([active.id, expiring.id, revoked.id, revokedAndExpired.id])
      const text = JSON.stringify(listed)
      for (const key of [active, expiring, revoked, revokedAndExpired]) {
        expect(text).not.toContain(key.key)
        expect(text).not.toContain(hashApiKey(key.key))
        expect(listed.find((k) => k.id === key.id)?.prefix).toBe(key.key.slice(0, 10))
      }
    })

    it("never shows another tenant's keys", async () => {
      const mine = await create()
      const theirs = await create({}, otherTenantId)
      const ids = (await cloud.services.apiKeys.list(tenantId)).map((k) => k.id)
      expect(ids).toContain(mine.id)
      expect(ids).not.toContain(theirs.id)
    })
  })

  it('refuses to create a key for a tenant that does not exist', async () => {
    const err = await rejection(create({}, 'ten_00000000000000000000000000'))
    expect(err.code).toBe('tenant_not_found')
  })
})
