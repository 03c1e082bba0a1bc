import { afterEach, beforeAll, expect, it } from 'vitest'
import type { OAuthAppSummary } from '../../../../shared/credentials.js'
import { nowMicros, parseTimestamp } from '../../../../shared/time.js'
import { bearer, describeEachDatabase } from '../../../support/cloud-harness.js'
import { adminConsole, type ConsoleApi, viewerConsole } from '../../console-kit.js'

// The console API: OAuth apps, as the CLI makes them, over /api/console/v1,
// and an app's audit history from the audit route.

const SECOND = 1_000_000

describeEachDatabase('OAuth apps in the console API', (cloud) => {
  let api: ConsoleApi

  beforeAll(async () => {
    api = await adminConsole(cloud, await cloud.createTenant())
  })
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  /** RFC 6749 §4.4 with client_secret_basic (§2.3.1: the id and secret form-encoded first). */
  const token = (clientId: string, clientSecret: string) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: {
        authorization: `Basic ${Buffer.from(
          `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`,
        ).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'grant_type=client_credentials',
    })
  const apps = async (console = api): Promise<OAuthAppSummary[]> => {
    const res = await console.get('/oauth-apps')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().nextCursor).toBeNull()
    return res.json().data
  }
  const history = async (appId: string) => {
    const res = await api.get(`/audit?targetId=${appId}`)
    expect(res.statusCode, res.body).toBe(200)
    return res.json().data as { action: string; actor: string; details: Record<string, unknown> }[]
  }
  const create = async (body: object) => {
    const res = await api.post('/oauth-apps', body)
    expect(res.statusCode, res.body).toBe(201)
    return res.json()
  }

  it('creates an app whose secret is shown once and obtains a token that works on the public API', async () => {
    const created = await create({ name: 'gate agent', scopes: ['employees:read'], rateLimitPerMinute: 30 })
    expect(created).toMatchObject({
      name: 'gate agent',
      scopes: ['employees:read'],
      rateLimitPerMinute: 30,
      status: 'active',
      revokedAt: null,
    })
    expect(created.id).toMatch(/^app_/)
    expect(created.clientId).toMatch(/^hjc_/)
    expect(created.clientSecret).toMatch(/^hjs_/)
    expect(created.secrets).toHaveLength(1)
    expect(created.clientSecret.startsWith(created.secrets[0].prefix)).toBe(true)

    const res = await token(created.clientId, created.clientSecret)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'employees:read' })
    const employees = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees',
      headers: bearer(res.json().access_token),
    })
    expect(employees.statusCode).toBe(200)

    const list = await api.get('/oauth-apps')
    expect(list.body).not.toContain(created.clientSecret)
    const { clientSecret: _secret, ...summary } = created
    expect((await apps()).find((a) => a.id === created.id)).toEqual(summary)
    expect((await history(created.id)).map((e) => [e.action, e.actor])).toEqual([
      ['oauth_app.created', api.actor],
    ])
    // The tokens it obtained are in the log too, under the app as actor.
    const issued = await api.get(`/audit?actor=oauth_app:${created.id}`)
    expect(issued.json().data.map((e: { action: string }) => e.action)).toEqual(['oauth_token.issued'])
  })

  it('generates the client id: a tenant cannot choose one (client ids are unique across the server)', async () => {
    const created = await create({ name: 'erp', scopes: ['attendance:read'] })
    expect(created.clientId).toMatch(/^hjc_[0-9A-Za-z]{24}$/)
    expect((await token(created.clientId, created.clientSecret)).statusCode).toBe(200)
    const clientId = `erp-connector-${cloud.kind}-${nowMicros()}`
    const chosen = await api.post('/oauth-apps', { name: 'erp again', scopes: ['attendance:read'], clientId })
    expect(chosen.statusCode).toBe(400)
    expect(chosen.json().errors).toEqual([expect.objectContaining({ pointer: '#/clientId' })])
  })

  it('rotates the secret: the new one works at once, the old one for its grace and not after', async () => {
    const app = await create({ name: 'rotating', scopes: ['employees:read'] })
    const rotatedAt = nowMicros()
    cloud.fixedNow = rotatedAt
    const res = await api.post(`/oauth-apps/${app.id}/rotate-secret`, { graceSeconds: 600 })
    expect(res.statusCode, res.body).toBe(200)
    const rotated = res.json()
    expect(Object.keys(rotated).sort()).toEqual(['clientId', 'clientSecret', 'id', 'previousSecretsExpireAt'])
    expect(rotated).toMatchObject({ id: app.id, clientId: app.clientId })
    expect(rotated.clientSecret).not.toBe(app.clientSecret)
    expect(parseTimestamp(rotated.previousSecretsExpireAt)).toBe(rotatedAt + 600 * SECOND)

    expect((await token(app.clientId, rotated.clientSecret)).statusCode).toBe(200)
    expect((await token(app.clientId, app.clientSecret)).statusCode).toBe(200)
    cloud.fixedNow = rotatedAt + 600 * SECOND
    expect((await token(app.clientId, app.clientSecret)).statusCode).toBe(401)
    expect((await token(app.clientId, rotated.clientSecret)).statusCode).toBe(200)

    // Without a body: a day of grace.
    cloud.fixedNow = rotatedAt + 700 * SECOND
    const again = await api.post(`/oauth-apps/${app.id}/rotate-secret`)
    expect(again.statusCode, again.body).toBe(200)
    expect(parseTimestamp(again.json().previousSecretsExpireAt)).toBe(rotatedAt + (700 + 86_400) * SECOND)

    const entries = await history(app.id)
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['oauth_app.secret_rotated', api.actor],
      ['oauth_app.secret_rotated', api.actor],
      ['oauth_app.created', api.actor],
    ])
    expect(JSON.stringify(entries)).not.toContain(rotated.clientSecret)
  })

  it('revokes an app: its secrets and tokens stop working, and it can no longer be rotated', async () => {
    const app = await create({ name: 'to revoke', scopes: ['employees:read'] })
    const { access_token } = (await token(app.clientId, app.clientSecret)).json()
    const res = await api.post(`/oauth-apps/${app.id}/revoke`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ id: app.id, status: 'revoked', secrets: [] })

    expect((await token(app.clientId, app.clientSecret)).statusCode).toBe(401)
    const employees = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees',
      headers: bearer(access_token),
    })
    expect(employees.statusCode).toBe(401)
    expect((await api.post(`/oauth-apps/${app.id}/revoke`)).statusCode).toBe(200)
    const rotate = await api.post(`/oauth-apps/${app.id}/rotate-secret`, { graceSeconds: 0 })
    expect(rotate.statusCode).toBe(404)
    expect(rotate.json().code).toBe('oauth_app_not_found')
    expect((await history(app.id)).map((e) => e.action)).toEqual(['oauth_app.revoked', 'oauth_app.created'])
  })

  it('refuses bad input with the field at fault, and creates nothing', async () => {
    const before = await apps()
    const cases: [string, object, string][] = [
      ['/oauth-apps', { scopes: ['employees:read'] }, '#/name'],
      ['/oauth-apps', { name: 'x', scopes: [] }, '#/scopes'],
      ['/oauth-apps', { name: 'x', scopes: ['admin'] }, '#/scopes/0'],
      ['/oauth-apps', { name: 'x', scopes: ['employees:read'], clientId: 'short' }, '#/clientId'],
      [
        '/oauth-apps',
        { name: 'x', scopes: ['employees:read'], rateLimitPerMinute: 100_001 },
        '#/rateLimitPerMinute',
      ],
      [`/oauth-apps/${before[0]?.id}/rotate-secret`, { graceSeconds: -1 }, '#/graceSeconds'],
      [`/oauth-apps/${before[0]?.id}/rotate-secret`, { graceSeconds: 30 * 86_400 + 1 }, '#/graceSeconds'],
    ]
    for (const [path, body, pointer] of cases) {
      const res = await api.post(path, body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.json().errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer)
    }
    expect(await apps()).toEqual(before)
    const missing = await api.post('/oauth-apps/app_01JBZ6Y2RQ85JBK7SD0QYTR420/revoke')
    expect(missing.statusCode).toBe(404)
    expect(missing.json().code).toBe('oauth_app_not_found')
  })

  it('lets a viewer list apps and read their history, but not create, rotate or revoke', async () => {
    const app = await create({ name: 'watched', scopes: ['employees:read'] })
    const viewer = await viewerConsole(cloud, api.tenantId)
    const before = await apps()
    expect(await apps(viewer)).toEqual(before)
    expect((await viewer.get(`/audit?targetId=${app.id}`)).statusCode).toBe(200)
    for (const [path, body] of [
      ['/oauth-apps', { name: 'viewer app', scopes: ['employees:read'] }],
      [`/oauth-apps/${app.id}/rotate-secret`, { graceSeconds: 0 }],
      [`/oauth-apps/${app.id}/revoke`, undefined],
    ] as const) {
      const res = await viewer.post(path, body)
      expect(res.statusCode, path).toBe(403)
      expect(res.json().code).toBe('insufficient_role')
    }
    expect(await apps()).toEqual(before)
    expect((await token(app.clientId, app.clientSecret)).statusCode).toBe(200)
  })
})
