import { beforeAll, expect, it } from 'vitest'
import type { ApiKeySummary } from '../../../../shared/credentials.js'
import { parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase } from '../../../support/cloud-harness.js'
import { adminConsole, type ConsoleApi, viewerConsole } from '../../console-kit.js'

// The console API: API keys, as the CLI makes them, over /api/console/v1.

const SECOND = 1_000_000

describeEachDatabase('API keys in the console API', (cloud) => {
  let api: ConsoleApi

  beforeAll(async () => {
    api = await adminConsole(cloud, await cloud.createTenant())
  })

  const keys = async (console = api): Promise<ApiKeySummary[]> => {
    const res = await console.get('/api-keys')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().nextCursor).toBeNull()
    return res.json().data
  }
  const publicGet = (key: string, url = '/api/public/v1/employees') =>
    cloud.app.inject({ method: 'GET', url, headers: bearer(key) })
  const audit = async (query: string) => {
    const res = await api.get(`/audit?${query}`)
    expect(res.statusCode, res.body).toBe(200)
    return res.json().data as { action: string; actor: string; target: { id: string } }[]
  }

  it('creates a key that is shown once, works on the public API with its scopes, and is listed without it', async () => {
    const res = await api.post('/api-keys', {
      name: 'payroll sync',
      scopes: ['employees:read'],
      expiresInSeconds: 3600,
      rateLimitPerMinute: 120,
    })
    expect(res.statusCode, res.body).toBe(201)
    const created = res.json()
    expect(created).toMatchObject({
      name: 'payroll sync',
      scopes: ['employees:read'],
      rateLimitPerMinute: 120,
      status: 'active',
      lastUsedAt: null,
      revokedAt: null,
    })
    expect(created.id).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/)
    expect(created.key).toMatch(/^hjk_/)
    expect(created.key.startsWith(created.prefix)).toBe(true)
    const lifetime = (parseTimestamp(created.expiresAt) ?? 0) - (parseTimestamp(created.createdAt) ?? 0)
    expect(lifetime).toBe(3600 * SECOND)

    expect((await publicGet(created.key)).statusCode).toBe(200)
    const outOfScope = await publicGet(created.key, '/api/public/v1/attendance/punches')
    expect(outOfScope.statusCode).toBe(403)
    expect(outOfScope.json().code).toBe('insufficient_scope')

    const list = await api.get('/api-keys')
    expect(list.body).not.toContain(created.key)
    const listed = (await keys()).find((k) => k.id === created.id)
    const { key: _secret, ...summary } = created
    expect(listed).toEqual({ ...summary, lastUsedAt: expect.any(String) })

    const entries = await audit(`action=api_key.created&targetId=${created.id}`)
    expect(entries.map((e) => e.actor)).toEqual([api.actor])
  })

  it('gives a key without settings the defaults: 90 days, 600 a minute', async () => {
    const res = await api.post('/api-keys', { scopes: ['attendance:write', 'attendance:read'] })
    expect(res.statusCode, res.body).toBe(201)
    const created = res.json()
    expect(created).toMatchObject({ name: 'api key', rateLimitPerMinute: 600 })
    const lifetime = (parseTimestamp(created.expiresAt) ?? 0) - (parseTimestamp(created.createdAt) ?? 0)
    expect(lifetime).toBe(90 * 86_400 * SECOND)
  })

  it('revokes a key: the next request with it is refused, and revoking again changes nothing', async () => {
    const { id, key } = (
      await api.post('/api-keys', { name: 'to revoke', scopes: ['employees:read'] })
    ).json()
    expect((await publicGet(key)).statusCode).toBe(200)

    const res = await api.post(`/api-keys/${id}/revoke`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ id, status: 'revoked', revokedAt: expect.any(String) })
    expect((await publicGet(key)).statusCode).toBe(401)

    const again = await api.post(`/api-keys/${id}/revoke`)
    expect(again.statusCode).toBe(200)
    expect(again.json().revokedAt).toBe(res.json().revokedAt)
    expect((await keys()).find((k) => k.id === id)?.status).toBe('revoked')
    expect((await audit(`targetId=${id}`)).map((e) => [e.action, e.actor])).toEqual([
      ['api_key.revoked', api.actor],
      ['api_key.created', api.actor],
    ])
  })

  it('refuses bad settings with the field at fault, and creates nothing', async () => {
    const before = await keys()
    const cases: [object, string][] = [
      [{ scopes: [] }, '#/scopes'],
      [{ scopes: ['employees:write'] }, '#/scopes/0'],
      [{ scopes: ['employees:read', 'employees:read'] }, '#/scopes'],
      [{ name: '', scopes: ['employees:read'] }, '#/name'],
      [{ name: 'x'.repeat(101), scopes: ['employees:read'] }, '#/name'],
      [{ scopes: ['employees:read'], expiresInSeconds: 59 }, '#/expiresInSeconds'],
      [{ scopes: ['employees:read'], expiresInSeconds: 2 * 365 * 86_400 + 1 }, '#/expiresInSeconds'],
      [{ scopes: ['employees:read'], rateLimitPerMinute: 0 }, '#/rateLimitPerMinute'],
      [{ scopes: ['employees:read'], rateLimitPerMinute: 1.5 }, '#/rateLimitPerMinute'],
      [{ scopes: ['employees:read'], tenantId: 'ten_x' }, '#/tenantId'],
      [{}, '#/scopes'],
    ]
    for (const [body, pointer] of cases) {
      const res = await api.post('/api-keys', body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.json().code).toBe('validation_failed')
      expect(
        res.json().errors.map((e: { pointer: string }) => e.pointer),
        JSON.stringify(body),
      ).toContain(pointer)
    }
    // A name of spaces passes the schema; the service, which trims it, refuses it.
    const blank = await api.post('/api-keys', { name: '   ', scopes: ['employees:read'] })
    expect(blank.statusCode).toBe(400)
    expect(blank.json().code).toBe('validation_failed')
    expect(await keys()).toEqual(before)
  })

  it('answers 404 for a key that is not there, and 400 for what cannot be a key id', async () => {
    const missing = await api.post('/api-keys/key_01JBZ6Y2RQ85JBK7SD0QYTR420/revoke')
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('api_key_not_found')
    const malformed = await api.post('/api-keys/not-a-key/revoke')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().code).toBe('validation_failed')
  })

  it('lets a viewer list keys but neither create nor revoke one', async () => {
    const viewer = await viewerConsole(cloud, api.tenantId)
    const { id, key } = (await api.post('/api-keys', { name: 'kept', scopes: ['employees:read'] })).json()
    const before = await keys()
    expect(await keys(viewer)).toEqual(before)

    const create = await viewer.post('/api-keys', { name: 'viewer key', scopes: ['employees:read'] })
    expect(create.statusCode).toBe(403)
    expect(create.json().code).toBe('insufficient_role')
    const revoke = await viewer.post(`/api-keys/${id}/revoke`)
    expect(revoke.statusCode).toBe(403)
    expect(revoke.json().code).toBe('insufficient_role')

    expect(await keys()).toEqual(before)
    expect((await publicGet(key)).statusCode).toBe(200)
  })
})
