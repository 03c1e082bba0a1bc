/**
 * OWASP API5:2023 Broken Function Level Authorization (scopes and console roles), from
 * the route table. Every public route is called with an API key and an OAuth token of every set of
 * scopes: its own scope lets it in, any set without it is a 403 insufficient_scope that changes
 * nothing. Every console API route is called by an owner, an admin, an admin token, a viewer and a
 * user who must still change a one-time password: a viewer may read everything and change nothing;
 * owners alone may invite or remove owners.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { SCOPES, type Scope } from '../../../shared/scopes.js'
import { bearer, describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import { type Browser, newTenant, newUser, signIn, uniqueEmail } from '../features/sessions/session-kit.js'
import {
  accessToken,
  type Caller,
  CONSOLE,
  codeOf,
  createTenantFixture,
  familyOf,
  ownRequest,
  PUBLIC,
  routeKey,
  send,
  type TenantFixture,
} from './security-kit.js'
import { type TenantRows, tenantRows } from './tenant-rows.js'

/** Every non-empty set of scopes. */
const SCOPE_SETS: Scope[][] = Array.from({ length: 2 ** SCOPES.length - 1 }, (_, n) =>
  SCOPES.filter((_, i) => (n + 1) & (1 << i)),
)

/** What a refused request could have changed: the tenant's rows, less those every request touches. */
async function stateOf(cloud: TestCloud, tenantId: string): Promise<TenantRows> {
  const rows = await tenantRows(cloud, tenantId)
  // A credential's last use and a session's last request are noted whatever the answer.
  delete rows.api_keys
  delete rows.console_sessions
  return rows
}

const isSafe = (route: RouteRecord) => route.method === 'GET' || route.method === 'HEAD'

describeEachDatabase('OWASP API5: scopes on every public route', (cloud) => {
  let t: TenantFixture

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
  }, 60_000)

  it('declares one known scope on every public route', () => {
    const routes = cloud.app.routeTable.filter((r) => familyOf(r) === 'public')
    expect(routes.length).toBeGreaterThanOrEqual(10)
    for (const route of routes) expect(SCOPES, routeKey(route)).toContain(route.scope)
  })

  it('lets in a key or token holding the route’s scope, and refuses every set without it with 403 insufficient_scope', async () => {
    const callers: { scopes: Scope[]; caller: Caller }[] = []
    for (const scopes of SCOPE_SETS) {
      callers.push({ scopes, caller: { kind: 'api_key', token: await cloud.createApiKey(t.id, scopes) } })
      const token = await accessToken(cloud, t.client.clientId, t.client.clientSecret, scopes.join(' '))
      callers.push({ scopes, caller: { kind: 'oauth_token', token } })
    }
    let refused = 0
    for (const route of cloud.app.routeTable.filter((r) => familyOf(r) === 'public')) {
      for (const { scopes, caller } of callers) {
        const planned = await ownRequest(cloud, route, t, caller)
        const label = `${routeKey(route)} by ${caller.kind} [${scopes.join(' ')}]`
        const before = isSafe(route) ? undefined : await stateOf(cloud, t.id)
        const res = await send(cloud, planned)
        if (scopes.includes(route.scope as Scope)) {
          expect(res.statusCode, `${label}: ${res.body}`).toBeLessThan(300)
          continue
        }
        expect(res.statusCode, `${label}: ${res.body}`).toBe(403)
        if (route.method !== 'HEAD') expect(codeOf(res), label).toBe('insufficient_scope')
        expect(res.headers['www-authenticate'], label).toBe(
          `Bearer realm="hajri", error="insufficient_scope", scope="${route.scope}"`,
        )
        if (before) expect(await stateOf(cloud, t.id), `${label} changed something`).toEqual(before)
        refused++
      }
    }
    expect(refused).toBeGreaterThanOrEqual(40)
  }, 180_000)

  it('lets in a manual punch (a correction) only with attendance:write and attendance:admin, refusing every other set with 403 insufficient_scope', async () => {
    let refused = 0
    for (const scopes of SCOPE_SETS) {
      for (const caller of [
        await cloud.createApiKey(t.id, scopes),
        await accessToken(cloud, t.client.clientId, t.client.clientSecret, scopes.join(' ')),
      ]) {
        const label = `manual punch [${scopes.join(' ')}]`
        const before = await stateOf(cloud, t.id)
        const res = await cloud.app.inject({
          method: 'POST',
          url: `${PUBLIC}/attendance/punches`,
          headers: bearer(caller),
          payload: {
            employeeCode: t.objects.employeeCode,
            punchType: 'IN',
            punchedAt: `${t.dates.past}T11:00:00+05:30`,
            source: 'manual',
            reason: label,
          },
        })
        if (scopes.includes('attendance:write') && scopes.includes('attendance:admin')) {
          expect(res.statusCode, `${label}: ${res.body}`).toBe(201)
          continue
        }
        expect(res.statusCode, `${label}: ${res.body}`).toBe(403)
        expect(codeOf(res), label).toBe('insufficient_scope')
        // RFC 6750 §3: the scope the request needs, which this credential lacks.
        const needed = scopes.includes('attendance:write') ? 'attendance:admin' : 'attendance:write'
        expect(res.headers['www-authenticate'], label).toBe(
          `Bearer realm="hajri", error="insufficient_scope", scope="${needed}"`,
        )
        expect(await stateOf(cloud, t.id), `${label} changed something`).toEqual(before)
        refused++
      }
    }
    expect(refused).toBe(
      2 * SCOPE_SETS.filter((s) => !s.includes('attendance:write') || !s.includes('attendance:admin')).length,
    )
  }, 120_000)
})

describeEachDatabase('OWASP API5: console roles on every console API route', (cloud) => {
  let t: TenantFixture
  let admin: Browser
  let viewer: Browser

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
    const adminUser = await newUser(cloud, t.id, 'admin')
    admin = await signIn(cloud, adminUser.email, adminUser.password)
    const viewerUser = await newUser(cloud, t.id, 'viewer')
    viewer = await signIn(cloud, viewerUser.email, viewerUser.password)
  }, 60_000)

  const consoleRoutes = () => cloud.app.routeTable.filter((r) => familyOf(r) === 'console')

  it('sorts every console API route into read (GET, HEAD) or write (everything else)', () => {
    const routes = consoleRoutes()
    expect(routes.length).toBeGreaterThanOrEqual(30)
    for (const route of routes) expect(route.access, routeKey(route)).toBe(isSafe(route) ? 'read' : 'write')
  })

  it('lets a viewer read everything and refuses every change with 403 insufficient_role, changing nothing', async () => {
    let refused = 0
    for (const route of consoleRoutes()) {
      const planned = await ownRequest(cloud, route, t, { kind: 'session', browser: viewer })
      const before = await stateOf(cloud, t.id)
      const res = await send(cloud, planned)
      const label = routeKey(route)
      if (isSafe(route)) {
        expect(res.statusCode, `${label}: ${res.body.slice(0, 200)}`).toBe(200)
        continue
      }
      expect(res.statusCode, `${label}: ${res.body}`).toBe(403)
      expect(codeOf(res), label).toBe('insufficient_role')
      expect(await stateOf(cloud, t.id), `${label} changed something`).toEqual(before)
      refused++
    }
    expect(refused).toBeGreaterThanOrEqual(18)
  }, 120_000)

  it('refuses a user who has not replaced a one-time password every console API route', async () => {
    const email = uniqueEmail('first-sign-in')
    const invited = await cloud.services.consoleUsers.invite(
      t.id,
      { email, role: 'owner' },
      { role: 'owner', actor: TEST_ACTOR },
    )
    const fresh = await signIn(cloud, email, invited.temporaryPassword)
    for (const route of consoleRoutes()) {
      const res = await send(cloud, await ownRequest(cloud, route, t, { kind: 'session', browser: fresh }))
      expect(res.statusCode, routeKey(route)).toBe(403)
      if (route.method !== 'HEAD') expect(codeOf(res), routeKey(route)).toBe('password_change_required')
    }
    // What it may do: see who it is, and choose a password.
    expect((await fresh.call('GET', '/session')).statusCode).toBe(200)
  })

  it('lets an owner, an admin and an admin token call every console API route', async () => {
    const callers: [string, Caller][] = [
      ['owner', { kind: 'session', browser: t.session }],
      ['admin', { kind: 'session', browser: admin }],
      ['admin token', { kind: 'admin_token', token: t.adminToken }],
    ]
    for (const route of consoleRoutes()) {
      for (const [who, caller] of callers) {
        const res = await send(cloud, await ownRequest(cloud, route, t, caller))
        expect(res.statusCode, `${routeKey(route)} by ${who}: ${res.body.slice(0, 200)}`).toBeLessThan(300)
      }
    }
  }, 180_000)

  it('keeps owners for owners: only an owner invites or removes one, and the last owner stays', async () => {
    const tenant = await newTenant(cloud)
    const owner = await signIn(cloud, tenant.email, tenant.password)
    const pass = await owner.call('POST', '/session/password', {
      body: { currentPassword: tenant.password, newPassword: 'the owner’s own password' },
    })
    expect(pass.statusCode).toBe(204)
    const ownerBrowser = await signIn(cloud, tenant.email, 'the owner’s own password')
    const adminUser = await newUser(cloud, tenant.tenantId, 'admin')
    const adminBrowser = await signIn(cloud, adminUser.email, adminUser.password)
    const token = await cloud.createAdminToken(tenant.tenantId)
    const invite = (call: (body: object) => Promise<LightMyRequestResponse>, role: string) =>
      call({ email: uniqueEmail(`as-${role}`), role })
    const bySession = (browser: Browser) => (body: object) => browser.call('POST', '/users', { body })
    const byToken = (body: object) =>
      cloud.app.inject({ method: 'POST', url: `${CONSOLE}/users`, headers: bearer(token), payload: body })

    for (const [who, call] of [
      ['admin', bySession(adminBrowser)],
      ['admin token', byToken],
    ] as const) {
      const res = await invite(call, 'owner')
      expect(res.statusCode, `${who} invites an owner`).toBe(403)
      expect(codeOf(res)).toBe('insufficient_role')
      expect((await invite(call, 'admin')).statusCode, `${who} invites an admin`).toBe(201)
    }
    const second = await invite(bySession(ownerBrowser), 'owner')
    expect(second.statusCode).toBe(201)
    const secondId = second.json().user.id as string
    for (const [who, remove] of [
      ['admin', () => adminBrowser.call('DELETE', `/users/${secondId}`)],
      [
        'admin token',
        () =>
          cloud.app.inject({ method: 'DELETE', url: `${CONSOLE}/users/${secondId}`, headers: bearer(token) }),
      ],
    ] as const) {
      const res = await remove()
      expect(res.statusCode, `${who} removes an owner`).toBe(403)
      expect(codeOf(res)).toBe('insufficient_role')
    }
    expect((await ownerBrowser.call('DELETE', `/users/${secondId}`)).statusCode).toBe(204)
    const last = await ownerBrowser.call('DELETE', `/users/${tenant.id}`)
    expect(last.statusCode).toBe(409)
    expect(codeOf(last)).toBe('last_owner')
  })
})
