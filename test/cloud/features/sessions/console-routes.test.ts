/**
 * The session lives in an HttpOnly, SameSite=Strict cookie, which is also Secure when served over
 * https; users can log out; no cookie or an expired session signs no one in
 * (docs/decisions/0045-console-sessions.md). Sessions end server-side: after sign-out, after 2 hours idle, 12
 * hours after sign-in, and a replayed cookie then signs no one in.
 */
import { afterEach, expect, it } from 'vitest'
import { buildApp } from '../../../../cloud/app.js'
import {
  SESSION_IDLE_SECONDS,
  SESSION_LIFETIME_SECONDS,
} from '../../../../cloud/features/sessions/service.js'
import { bearer, describeEachDatabase, type TestCloud } from '../../../support/cloud-harness.js'
import {
  CONSOLE,
  newTenant,
  newUser,
  problemOf,
  SESSION_COOKIE,
  sessionCookieOf,
  signedInOwner,
  signIn,
  signInRequest,
} from './session-kit.js'

const SECOND = 1_000_000

/** Another instance over the same database, as behind a proxy: its own trustProxy and public URL. */
async function appWith(cloud: TestCloud, config: { trustProxy: boolean; publicUrl?: string }) {
  return buildApp({
    config: { bodyLimitBytes: 1024 * 1024, logLevel: 'silent', ...config },
    database: cloud.database,
    closeDatabase: false,
    logger: false,
    now: cloud.now,
  })
}

describeEachDatabase('console sessions', (cloud) => {
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  it('sets the session cookie HttpOnly, SameSite=Strict, Path=/, and not Secure over plain http', async () => {
    const owner = await newTenant(cloud)
    const res = await signInRequest(cloud, owner.email, owner.password)
    expect(res.statusCode).toBe(200)
    const header = String(res.headers['set-cookie'])
    expect(header).toMatch(/^hajri_session=hjw_[0-9A-Za-z]{46}; /)
    expect(header).toContain('; HttpOnly')
    expect(header).toContain('; SameSite=Strict')
    expect(header).toContain('; Path=/')
    expect(header).not.toMatch(/; Secure/i)
    // A browser-session cookie: the server decides when it ends.
    expect(header).not.toMatch(/Max-Age|Expires/i)
  })

  it('adds Secure when the request came over https, as a trusted proxy reports it (X-Forwarded-Proto)', async () => {
    const owner = await newTenant(cloud)
    const behindProxy = await appWith(cloud, { trustProxy: true })
    const direct = await appWith(cloud, { trustProxy: false })
    try {
      const signInVia = (app: typeof behindProxy) =>
        app.inject({
          method: 'POST',
          url: `${CONSOLE}/session`,
          headers: { 'x-forwarded-proto': 'https' },
          payload: { email: owner.email, password: owner.password },
        })
      const secure = await signInVia(behindProxy)
      expect(secure.statusCode, secure.body).toBe(200)
      expect(sessionCookieOf(secure)).toMatchObject({
        httpOnly: true,
        sameSite: 'Strict',
        secure: true,
        path: '/',
      })
      // Without trustProxy the header is anyone's to send, and means nothing.
      const plain = await signInVia(direct)
      expect(plain.statusCode).toBe(200)
      expect(sessionCookieOf(plain)?.secure).toBeFalsy()
    } finally {
      await behindProxy.close()
      await direct.close()
    }
  })

  it('adds Secure when HAJRI_PUBLIC_URL is https, whatever the hop to the server was', async () => {
    const owner = await newTenant(cloud)
    const app = await appWith(cloud, { trustProxy: false, publicUrl: 'https://console.example.com' })
    try {
      const res = await app.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        payload: { email: owner.email, password: owner.password },
      })
      expect(res.statusCode).toBe(200)
      expect(sessionCookieOf(res)?.secure).toBe(true)
    } finally {
      await app.close()
    }
  })

  it('answers GET /session with the signed-in user and the same CSRF token as the sign-in', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const res = await browser.call('GET', '/session')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.json()).toMatchObject({
      user: { id: owner.id, email: owner.email, role: 'owner', mustChangePassword: false },
      tenant: { id: owner.tenantId },
      csrfToken: browser.csrfToken,
    })
  })

  it('answers 401 without a cookie, on the session and on the console API', async () => {
    for (const url of ['/session', '/webhooks', '/users']) {
      const res = await cloud.app.inject({ method: 'GET', url: `${CONSOLE}${url}` })
      expect(problemOf(res), url).toEqual({ status: 401, code: 'authentication_required' })
    }
    // RFC 9110 §11.6.1: each 401 names a scheme the route takes. The console API takes admin
    // tokens; the session routes, the cookie only.
    const admin = await cloud.app.inject({ method: 'GET', url: `${CONSOLE}/webhooks` })
    expect(admin.headers['www-authenticate']).toMatch(/^Bearer /)
    const session = await cloud.app.inject({ method: 'GET', url: `${CONSOLE}/session` })
    expect(session.headers['www-authenticate']).toMatch(
      /^Cookie realm="hajri", .*cookie-name="hajri_session"/,
    )
    const owner = await newTenant(cloud)
    const wrong = await signInRequest(cloud, owner.email, 'wrong password')
    expect(wrong.headers['www-authenticate']).toMatch(/^Cookie /)
    expect(
      (await signInRequest(cloud, owner.email, owner.password)).headers['www-authenticate'],
    ).toBeUndefined()
  })

  it('answers 401 session_expired to a cookie it does not know, and clears it', async () => {
    for (const value of ['hjw_made-up', `hjw_${'A'.repeat(46)}`, 'garbage']) {
      for (const url of ['/session', '/webhooks']) {
        const res = await cloud.app.inject({
          method: 'GET',
          url: `${CONSOLE}${url}`,
          cookies: { [SESSION_COOKIE]: value },
        })
        expect(problemOf(res), `${url} ${value}`).toEqual({ status: 401, code: 'session_expired' })
        const cleared = sessionCookieOf(res)
        expect(cleared?.value).toBe('')
        expect(cleared?.expires?.valueOf()).toBeLessThanOrEqual(Date.now())
      }
    }
  })

  it('signs out: 204, the cookie cleared, and the session dead on the server even if the cookie is replayed', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const other = await signIn(cloud, owner.email, owner.password)
    const res = await browser.call('DELETE', '/session')
    expect(res.statusCode, res.body).toBe(204)
    expect(sessionCookieOf(res)?.value).toBe('')
    for (const url of ['/session', '/webhooks'])
      expect(problemOf(await browser.call('GET', url))).toEqual({ status: 401, code: 'session_expired' })
    expect(problemOf(await browser.call('DELETE', '/session'))).toEqual({
      status: 401,
      code: 'session_expired',
    })
    // The user's other session is another browser's: it goes on.
    expect((await other.call('GET', '/session')).statusCode).toBe(200)
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'console_user.signed_out' })
    expect(audit.data).toHaveLength(1)
    expect(audit.data[0]?.actor).toBe(`console_user:${owner.id}`)
  })

  it(`ends a session idle for ${SESSION_IDLE_SECONDS / 3600} hours`, async () => {
    const start = cloud.now()
    cloud.fixedNow = start
    const { browser } = await signedInOwner(cloud)
    cloud.fixedNow = start + (SESSION_IDLE_SECONDS - 1) * SECOND
    expect((await browser.call('GET', '/webhooks')).statusCode).toBe(200)
    // Idle counts from that last request.
    cloud.fixedNow += SESSION_IDLE_SECONDS * SECOND
    for (const url of ['/webhooks', '/session'])
      expect(problemOf(await browser.call('GET', url)), url).toEqual({ status: 401, code: 'session_expired' })
    // Gone for good, even if the clock went back.
    cloud.fixedNow = start
    expect(problemOf(await browser.call('GET', '/session'))).toEqual({ status: 401, code: 'session_expired' })
  })

  it(`ends a session ${SESSION_LIFETIME_SECONDS / 3600} hours after sign-in, however busy`, async () => {
    const start = cloud.now()
    cloud.fixedNow = start
    const { browser } = await signedInOwner(cloud)
    for (let t = 0; t < SESSION_LIFETIME_SECONDS; t += SESSION_IDLE_SECONDS / 2) {
      cloud.fixedNow = start + t * SECOND
      expect((await browser.call('GET', '/session')).statusCode, `at ${t} s`).toBe(200)
    }
    cloud.fixedNow = start + SESSION_LIFETIME_SECONDS * SECOND
    expect(problemOf(await browser.call('GET', '/session'))).toEqual({ status: 401, code: 'session_expired' })
  })

  it('purges ended sessions from the database', async () => {
    const start = cloud.now()
    cloud.fixedNow = start
    const { owner } = await signedInOwner(cloud)
    const count = async () =>
      (
        await cloud.database.db
          .selectFrom('console_sessions')
          .select('token_hash')
          .where('user_id', '=', owner.id)
          .execute()
      ).length
    expect(await count()).toBe(2)
    cloud.fixedNow = start + SESSION_IDLE_SECONDS * SECOND
    expect(await cloud.services.consoleSessions.purgeExpired()).toBeGreaterThanOrEqual(2)
    expect(await count()).toBe(0)
  })

  it('stores only a hash of the session secret', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const rows = await cloud.database.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('user_id', '=', owner.id)
      .execute()
    expect(rows.length).toBeGreaterThan(0)
    expect(JSON.stringify(rows)).not.toContain(browser.cookie)
    expect(JSON.stringify(rows)).not.toContain(browser.cookie.slice(4, -6))
  })

  it('lets a session use the existing console API routes, audited as the user', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const created = await browser.call('POST', '/webhooks', {
      body: { url: 'https://hooks.example.com/session' },
    })
    expect(created.statusCode, created.body).toBe(201)
    const listed = await browser.call('GET', '/webhooks')
    expect(listed.json().data.map((e: { id: string }) => e.id)).toContain(created.json().id)
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'webhook_endpoint.created' })
    expect(audit.data[0]?.actor).toBe(`console_user:${owner.id}`)
  })

  it('takes the admin token when a request carries a token and a cookie (the token wins)', async () => {
    const owner = await newTenant(cloud)
    const viewer = await newUser(cloud, owner.tenantId, 'viewer')
    const browser = await signIn(cloud, viewer.email, viewer.password)
    const { id: tokenId, token } = await cloud.services.adminTokens.create(
      owner.tenantId,
      {},
      {
        name: 'test',
        ip: null,
      },
    )
    // A viewer's cookie and no CSRF token: refused as a session, accepted as the token (an admin).
    const res = await browser.call('POST', '/webhooks', {
      body: { url: 'https://hooks.example.com/both' },
      csrf: null,
      headers: bearer(token),
    })
    expect(res.statusCode, res.body).toBe(201)
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'webhook_endpoint.created' })
    expect(audit.data[0]?.actor).toBe(`admin_token:${tokenId}`)
    // A bad token is not rescued by a good cookie.
    const bad = await browser.call('GET', '/webhooks', { headers: bearer('hjt_nope') })
    expect(problemOf(bad)).toEqual({ status: 401, code: 'invalid_credential' })
    // And a token from a page is refused as before, cookie or not.
    const fromPage = await browser.call('GET', '/webhooks', {
      headers: { ...bearer(token), origin: 'http://localhost' },
    })
    expect(problemOf(fromPage)).toEqual({ status: 403, code: 'browser_origin_forbidden' })
  })

  it('ignores an Authorization header on the session routes: they take the cookie only', async () => {
    const owner = await newTenant(cloud)
    const token = (await cloud.services.adminTokens.create(owner.tenantId, {}, { name: 'test', ip: null }))
      .token
    const res = await cloud.app.inject({ method: 'GET', url: `${CONSOLE}/session`, headers: bearer(token) })
    expect(problemOf(res)).toEqual({ status: 401, code: 'authentication_required' })
  })
})
