import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../../../cloud/app-error.js'
import { CLIENT_SECRET, hashSecret, isWellFormedSecret } from '../../../../cloud/auth/secret-format.js'
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../../../cloud/features/bearer-auth/credential-settings.js'
import {
  DEFAULT_ROTATION_GRACE_SECONDS,
  MAX_ROTATION_GRACE_SECONDS,
} from '../../../../cloud/features/secret-rotation.js'
import { problemStatus } from '../../../../shared/problem.js'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import { everyStoredValue } from '../../stored-values.js'

const SECOND = 1_000_000
const HOUR = 3600 * SECOND

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(AppError)
  return err as AppError
}

/** A client id no other test (or database run) uses: the index on client ids is global. */
const uniqueClientId = (label: string) => `${label}-${Math.random().toString(36).slice(2, 12)}`

describeEachDatabase('OAuth app service', (cloud: TestCloud) => {
  let tenantId: string
  let otherTenantId: string

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    otherTenantId = await cloud.createTenant()
  })

  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const apps = () => cloud.services.oauthApps
  const create = (
    input: { name?: string; scopes?: string[]; rateLimitPerMinute?: number; clientId?: string } = {},
    tenant = tenantId,
  ) => apps().create(tenant, { name: 'site agent', scopes: ['attendance:write'], ...input }, TEST_ACTOR)
  const works = async (clientId: string, secret: string) =>
    (await apps().authenticateClient(clientId, secret)) !== undefined
  const listed = async (id: string, tenant = tenantId) => {
    const app = (await apps().list(tenant)).find((a) => a.id === id)
    if (!app) throw new Error(`app ${id} not listed`)
    return app
  }

  describe('create', () => {
    it('issues an id, a generated client id and a well-formed secret, with the defaults', async () => {
      const created = await create({ scopes: ['attendance:write', 'employees:read'] })
      expect(Object.keys(created).sort()).toEqual(['clientId', 'clientSecret', 'id'])
      expect(created.id).toMatch(/^app_[0-9A-HJKMNP-TV-Z]{26}$/)
      expect(created.clientId).toMatch(/^hjc_[0-9A-Za-z]{24}$/)
      expect(isWellFormedSecret(CLIENT_SECRET, created.clientSecret)).toBe(true)
      const app = await listed(created.id)
      expect(app).toMatchObject({
        name: 'site agent',
        clientId: created.clientId,
        scopes: ['attendance:write', 'employees:read'],
        rateLimitPerMinute: DEFAULT_RATE_LIMIT_PER_MINUTE,
        status: 'active',
        revokedAt: null,
      })
      const client = await apps().authenticateClient(created.clientId, created.clientSecret)
      expect(client?.app.id).toBe(created.id)
      expect(client?.tenant.id).toBe(tenantId)
      expect(client?.scopes).toEqual(['attendance:write', 'employees:read'])
    })

    it('gives every app its own client id and secret', async () => {
      const a = await create()
      const b = await create()
      expect(a.clientId).not.toBe(b.clientId)
      expect(a.clientSecret).not.toBe(b.clientSecret)
      expect(await works(a.clientId, b.clientSecret)).toBe(false)
    })

    it('refuses a wrong name, scope or rate limit, naming every problem at once', async () => {
      const cases: [Parameters<typeof create>[0], string[]][] = [
        [{ name: '' }, ['name']],
        [{ name: '   ' }, ['name']],
        [{ name: 'x'.repeat(101) }, ['name']],
        [{ scopes: [] }, ['scopes']],
        [{ scopes: ['attendance:write', 'employees:write'] }, ['employees:write']],
        [{ rateLimitPerMinute: 0 }, ['rate limit']],
        [{ rateLimitPerMinute: 100_001 }, ['rate limit']],
        [{ rateLimitPerMinute: 1.5 }, ['rate limit']],
        [{ name: '', scopes: ['admin'], rateLimitPerMinute: -1 }, ['name', '"admin"', 'rate limit']],
      ]
      for (const [input, mentions] of cases) {
        const err = await rejection(create(input))
        expect(err.code, JSON.stringify(input)).toBe('validation_failed')
        for (const m of mentions) expect(err.detail, JSON.stringify(input)).toContain(m)
      }
    })

    it('accepts a chosen client id of 8 to 128 printable ASCII characters, inner spaces included', async () => {
      for (const clientId of [
        'a'.repeat(8),
        'x'.repeat(128),
        uniqueClientId('pune plant:1+gate&%'),
        uniqueClientId('~!@#$^*()'),
      ]) {
        // Fixed ids are safe here: client ids are unique per database, and each run has its own.
        const created = await create({ clientId })
        expect(created.clientId).toBe(clientId)
        expect(await works(clientId, created.clientSecret)).toBe(true)
      }
    })

    it('refuses a client id that is too short, too long, padded or not printable ASCII', async () => {
      for (const clientId of [
        'a'.repeat(7),
        'x'.repeat(129),
        ' leading-space',
        'trailing-space ',
        'tab\tinside',
        'new\nline-id',
        'pune-plant-ü',
        '',
      ]) {
        const err = await rejection(create({ clientId }))
        expect(err.code, JSON.stringify(clientId)).toBe('validation_failed')
        expect(err.detail, JSON.stringify(clientId)).toContain('client id')
      }
    })

    it('refuses a client id already in use, in this tenant or another, and writes nothing', async () => {
      const clientId = uniqueClientId('taken')
      const first = await create({ clientId })
      const before = await everyStoredValue(cloud.database.db)
      for (const tenant of [tenantId, otherTenantId]) {
        const err = await rejection(create({ clientId, name: 'second' }, tenant))
        expect(err.code).toBe('client_id_taken')
        expect(problemStatus(err.code)).toBe(409)
      }
      expect(await everyStoredValue(cloud.database.db)).toBe(before)
      expect(await works(clientId, first.clientSecret)).toBe(true)
    })

    it('refuses a tenant that does not exist', async () => {
      const err = await rejection(create({}, 'ten_00000000000000000000000000'))
      expect(err.code).toBe('tenant_not_found')
    })
  })

  describe('secrets are shown once', () => {
    it('keeps only a hash of each secret: no table holds the secret itself', async () => {
      const created = await create()
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR)
      const stored = await everyStoredValue(cloud.database.db)
      for (const secret of [created.clientSecret, rotated.clientSecret]) {
        expect(stored).not.toContain(secret)
        // Nor the random part alone, should the prefix have been stripped before storing.
        expect(stored).not.toContain(secret.slice(4))
        expect(stored).toContain(hashSecret(secret))
      }
    })

    it('lists only a short prefix of each live secret', async () => {
      const created = await create()
      const app = await listed(created.id)
      expect(app.secrets).toEqual([
        {
          id: expect.stringMatching(/^sec_/),
          prefix: created.clientSecret.slice(0, 10),
          createdAt: expect.any(String),
          expiresAt: null,
        },
      ])
      expect(JSON.stringify(await apps().list(tenantId))).not.toContain(created.clientSecret)
    })
  })

  describe('rotateSecret', () => {
    it('issues a new secret at once; the old one works for 24 hours by default, then not', async () => {
      expect(DEFAULT_ROTATION_GRACE_SECONDS).toBe(24 * 3600)
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR)
      expect(rotated).toEqual({
        id: created.id,
        clientId: created.clientId,
        clientSecret: expect.any(String),
        previousSecretsExpireAt: formatServerTime(t + 24 * HOUR),
      })
      expect(isWellFormedSecret(CLIENT_SECRET, rotated.clientSecret)).toBe(true)
      expect(rotated.clientSecret).not.toBe(created.clientSecret)

      expect(await works(created.clientId, created.clientSecret)).toBe(true)
      expect(await works(created.clientId, rotated.clientSecret)).toBe(true)
      cloud.fixedNow = t + 24 * HOUR - 1
      expect(await works(created.clientId, created.clientSecret)).toBe(true)
      cloud.fixedNow = t + 24 * HOUR
      expect(await works(created.clientId, created.clientSecret)).toBe(false)
      expect(await works(created.clientId, rotated.clientSecret)).toBe(true)
      // The new secret has no end of its own.
      cloud.fixedNow = t + 365 * 24 * HOUR
      expect(await works(created.clientId, rotated.clientSecret)).toBe(true)
    })

    it('takes a chosen grace: the old secret works until then, then not', async () => {
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 2 * 3600)
      expect(rotated.previousSecretsExpireAt).toBe(formatServerTime(t + 2 * HOUR))
      cloud.fixedNow = t + 2 * HOUR - 1
      expect(await works(created.clientId, created.clientSecret)).toBe(true)
      cloud.fixedNow = t + 2 * HOUR
      expect(await works(created.clientId, created.clientSecret)).toBe(false)
      expect(await works(created.clientId, rotated.clientSecret)).toBe(true)
    })

    it('with a grace of 0 cuts the old secret off at once', async () => {
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 0)
      expect(rotated.previousSecretsExpireAt).toBe(formatServerTime(t))
      expect(await works(created.clientId, created.clientSecret)).toBe(false)
      expect(await works(created.clientId, rotated.clientSecret)).toBe(true)
    })

    it('never extends an earlier grace, and a later shorter one cuts every older secret', async () => {
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const second = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 3600)
      cloud.fixedNow = t + 60 * SECOND
      const third = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 24 * 3600)
      // The first secret still ends an hour after the first rotation, not a day after the second.
      cloud.fixedNow = t + HOUR
      expect(await works(created.clientId, created.clientSecret)).toBe(false)
      expect(await works(created.clientId, second.clientSecret)).toBe(true)
      expect(await works(created.clientId, third.clientSecret)).toBe(true)
      const fourth = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 0)
      for (const old of [second, third]) expect(await works(created.clientId, old.clientSecret)).toBe(false)
      expect(await works(created.clientId, fourth.clientSecret)).toBe(true)
    })

    it('accepts up to 30 days of grace and refuses more, a negative or a fractional grace', async () => {
      expect(MAX_ROTATION_GRACE_SECONDS).toBe(30 * 86_400)
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const longest = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, MAX_ROTATION_GRACE_SECONDS)
      expect(longest.previousSecretsExpireAt).toBe(formatServerTime(t + 30 * 24 * HOUR))
      for (const grace of [MAX_ROTATION_GRACE_SECONDS + 1, 365 * 86_400, -1, 0.5, Number.NaN]) {
        const err = await rejection(apps().rotateSecret(tenantId, created.id, TEST_ACTOR, grace))
        expect(err.code, String(grace)).toBe('validation_failed')
        expect(err.detail).toContain('grace')
      }
      // The refused rotations issued nothing: the app has the two secrets it had.
      expect((await listed(created.id)).secrets).toHaveLength(2)
    })

    it("answers oauth_app_not_found for another tenant's app, an unknown id, or a revoked app", async () => {
      const theirs = await create({}, otherTenantId)
      for (const id of [theirs.id, 'app_00000000000000000000000000']) {
        const err = await rejection(apps().rotateSecret(tenantId, id, TEST_ACTOR))
        expect(err.code, id).toBe('oauth_app_not_found')
        expect(problemStatus(err.code)).toBe(404)
      }
      expect((await listed(theirs.id, otherTenantId)).secrets).toHaveLength(1)
      expect(await works(theirs.clientId, theirs.clientSecret)).toBe(true)

      const revoked = await create()
      await apps().revoke(tenantId, revoked.id, TEST_ACTOR)
      expect((await rejection(apps().rotateSecret(tenantId, revoked.id, TEST_ACTOR))).code).toBe(
        'oauth_app_not_found',
      )
    })
  })

  describe('list', () => {
    it('shows the live secrets only: a rotated-out one until its grace ends', async () => {
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR, 3600)
      const during = (await listed(created.id)).secrets
      expect(during.map((s) => [s.prefix, s.expiresAt])).toEqual([
        [created.clientSecret.slice(0, 10), formatServerTime(t + HOUR)],
        [rotated.clientSecret.slice(0, 10), null],
      ])
      cloud.fixedNow = t + HOUR
      const after = (await listed(created.id)).secrets
      expect(after.map((s) => [s.prefix, s.expiresAt])).toEqual([[rotated.clientSecret.slice(0, 10), null]])
    })

    it("never shows another tenant's apps", async () => {
      const mine = await create()
      const theirs = await create({}, otherTenantId)
      const ids = (await apps().list(tenantId)).map((a) => a.id)
      expect(ids).toContain(mine.id)
      expect(ids).not.toContain(theirs.id)
    })
  })

  describe('revoke', () => {
    it('ends authentication with every secret, current or in its grace', async () => {
      const created = await create()
      const rotated = await apps().rotateSecret(tenantId, created.id, TEST_ACTOR)
      const t = nowMicros()
      cloud.fixedNow = t
      const revoked = await apps().revoke(tenantId, created.id, TEST_ACTOR)
      expect(revoked).toMatchObject({
        id: created.id,
        status: 'revoked',
        revokedAt: formatServerTime(t),
        secrets: [],
      })
      expect(await works(created.clientId, created.clientSecret)).toBe(false)
      expect(await works(created.clientId, rotated.clientSecret)).toBe(false)
      expect(await listed(created.id)).toMatchObject({ status: 'revoked', secrets: [] })
    })

    it('is idempotent: a second revoke keeps the first time and writes no second audit entry', async () => {
      const created = await create()
      const t = nowMicros()
      cloud.fixedNow = t
      await apps().revoke(tenantId, created.id, TEST_ACTOR)
      cloud.fixedNow = t + 10 * SECOND
      const again = await apps().revoke(tenantId, created.id, TEST_ACTOR)
      expect(again.revokedAt).toBe(formatServerTime(t))
      const log = await cloud.services.audit.list(tenantId, {
        targetId: created.id,
        action: 'oauth_app.revoked',
      })
      expect(log.data).toHaveLength(1)
    })

    it("answers oauth_app_not_found for another tenant's app or an unknown id, and leaves theirs working", async () => {
      const theirs = await create({}, otherTenantId)
      for (const id of [theirs.id, 'app_00000000000000000000000000']) {
        expect((await rejection(apps().revoke(tenantId, id, TEST_ACTOR))).code, id).toBe(
          'oauth_app_not_found',
        )
      }
      expect((await listed(theirs.id, otherTenantId)).status).toBe('active')
      expect(await works(theirs.clientId, theirs.clientSecret)).toBe(true)
    })
  })

  describe('authenticateClient', () => {
    it('refuses a wrong secret, a wrong client id, an empty or overlong id', async () => {
      const created = await create()
      const other = await create()
      expect(await works(created.clientId, other.clientSecret)).toBe(false)
      expect(await works(created.clientId, `${created.clientSecret}x`)).toBe(false)
      expect(await works(created.clientId, '')).toBe(false)
      expect(await works(`${created.clientId}x`, created.clientSecret)).toBe(false)
      expect(await works('', created.clientSecret)).toBe(false)
      expect(await works('x'.repeat(129), created.clientSecret)).toBe(false)
      // The secret is not accepted as a hash, nor under another app's client id.
      expect(await works(created.clientId, hashSecret(created.clientSecret))).toBe(false)
      expect(await works(other.clientId, created.clientSecret)).toBe(false)
    })
  })
})
