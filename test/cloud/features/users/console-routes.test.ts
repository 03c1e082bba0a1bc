/**
 * Console users belong to a tenant, with a role: owner, admin or viewer; admins can invite and
 * remove users; viewers can read but not change anything (docs/decisions/0050-console-roles.md). Owners
 * manage everyone, admins (and admin tokens) everyone but owners, viewers no one; the last owner stays; a
 * removed user's sessions end at once; another tenant's users are never found; every act is audited.
 */
import { expect, it } from 'vitest'
import { SIGN_IN_DELAYS } from '../../../../cloud/features/sign-in-throttle/sign-in-delays.js'
import { bearer, describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import {
  type Browser,
  CONSOLE,
  newTenant,
  newUser,
  problemOf,
  signedInOwner,
  signIn,
  signInRequest,
  type TestUser,
  uniqueEmail,
} from '../sessions/session-kit.js'

async function signedIn(cloud: TestCloud, tenantId: string, role: 'owner' | 'admin' | 'viewer') {
  const user = await newUser(cloud, tenantId, role)
  return { user, browser: await signIn(cloud, user.email, user.password) }
}

const invite = (browser: Browser, email: string, role: string) =>
  browser.call('POST', '/users', { body: { email, role } })

describeEachDatabase('console users and roles', (cloud) => {
  it('lets an owner invite a user of each role, with a one-time password good for a first sign-in', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    for (const role of ['owner', 'admin', 'viewer']) {
      const email = uniqueEmail(role)
      const res = await invite(browser, email.toUpperCase(), role)
      expect(res.statusCode, res.body).toBe(201)
      expect(res.headers['cache-control']).toBe('no-store')
      const body = res.json()
      expect(body).toEqual({
        user: {
          id: expect.stringMatching(/^usr_/),
          email,
          role,
          mustChangePassword: true,
          createdAt: expect.any(String),
          lastSignInAt: null,
        },
        temporaryPassword: expect.stringMatching(/^[A-Za-z0-9]{20}$/),
      })
      const first = await signInRequest(cloud, email, body.temporaryPassword)
      expect(first.statusCode).toBe(200)
      expect(first.json().user).toMatchObject({ id: body.user.id, role, mustChangePassword: true })
      const audit = await cloud.services.audit.list(owner.tenantId, { targetId: body.user.id })
      expect(audit.data.find((e) => e.action === 'console_user.invited')).toMatchObject({
        actor: `console_user:${owner.id}`,
        details: { email, role },
      })
      expect(JSON.stringify(audit.data)).not.toContain(body.temporaryPassword)
    }
  })

  it('lists the tenant’s users, in pages, and none of another tenant’s', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const invited = []
    for (let i = 0; i < 3; i++)
      invited.push((await invite(browser, uniqueEmail('list'), 'viewer')).json().user.id)
    await signedInOwner(cloud)
    const seen: string[] = []
    let url = '/users?limit=2'
    for (;;) {
      const res = await browser.call('GET', url)
      expect(res.statusCode, res.body).toBe(200)
      const page = res.json()
      expect(page.data.length).toBeLessThanOrEqual(2)
      seen.push(...page.data.map((u: { id: string }) => u.id))
      if (page.nextCursor === null) break
      url = `/users?limit=2&cursor=${page.nextCursor}`
    }
    expect(seen).toEqual([owner.id, ...invited])
    expect(problemOf(await browser.call('GET', '/users?cursor=bm9wZQ'))).toEqual({
      status: 400,
      code: 'invalid_cursor',
    })
    expect(problemOf(await browser.call('GET', '/users?limit=0'))).toEqual({
      status: 400,
      code: 'validation_failed',
    })
  })

  it('refuses an email that is already a console user’s in this tenant, and takes one of another tenant’s', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const other = await newTenant(cloud)
    for (const email of [owner.email, `  ${owner.email.toUpperCase()}`]) {
      const res = await invite(browser, email.trim(), 'viewer')
      expect(problemOf(res), email).toEqual({ status: 409, code: 'console_user_exists' })
    }
    // Emails are unique within a tenant only: another tenant's user is none of this one's business.
    expect((await invite(browser, other.email.toUpperCase(), 'viewer')).statusCode).toBe(201)
    expect(problemOf(await invite(browser, 'not-an-email', 'viewer'))).toEqual({
      status: 400,
      code: 'validation_failed',
    })
    expect(problemOf(await invite(browser, uniqueEmail('x'), 'superuser'))).toEqual({
      status: 400,
      code: 'validation_failed',
    })
  })

  it('lets an admin invite and remove admins and viewers, but not invite or remove an owner', async () => {
    const { owner } = await signedInOwner(cloud)
    const { browser: admin } = await signedIn(cloud, owner.tenantId, 'admin')
    const viewer = (await invite(admin, uniqueEmail('by-admin'), 'viewer')).json().user.id
    const peer = (await invite(admin, uniqueEmail('by-admin'), 'admin')).json().user.id
    expect(problemOf(await invite(admin, uniqueEmail('owner'), 'owner'))).toEqual({
      status: 403,
      code: 'insufficient_role',
    })
    expect(problemOf(await admin.call('DELETE', `/users/${owner.id}`))).toEqual({
      status: 403,
      code: 'insufficient_role',
    })
    for (const id of [viewer, peer]) expect((await admin.call('DELETE', `/users/${id}`)).statusCode).toBe(204)
    const ids = (await admin.call('GET', '/users')).json().data.map((u: { id: string }) => u.id)
    expect(ids).toContain(owner.id)
    expect(ids).not.toContain(viewer)
    expect(ids).not.toContain(peer)
  })

  it('lets a viewer read but change nothing', async () => {
    const { owner } = await signedInOwner(cloud)
    const { user, browser: viewer } = await signedIn(cloud, owner.tenantId, 'viewer')
    expect((await viewer.call('GET', '/users')).statusCode).toBe(200)
    expect((await viewer.call('GET', '/webhooks')).statusCode).toBe(200)
    for (const [method, path, body] of [
      ['POST', '/users', { email: uniqueEmail('v'), role: 'viewer' }],
      ['DELETE', `/users/${owner.id}`, undefined],
      ['DELETE', `/users/${user.id}`, undefined],
      ['POST', '/webhooks', { url: 'https://hooks.example.com/viewer' }],
    ] as const) {
      const res = await viewer.call(method, path, body ? { body } : {})
      expect(problemOf(res), `${method} ${path}`).toEqual({ status: 403, code: 'insufficient_role' })
    }
    // But their own session is theirs: they sign out, and change their password.
    expect(
      (
        await viewer.call('POST', '/session/password', {
          body: { currentPassword: user.password, newPassword: 'a viewer’s own new password' },
        })
      ).statusCode,
    ).toBe(204)
    expect((await viewer.call('DELETE', '/session')).statusCode).toBe(204)
  })

  it('ends a removed user’s sessions at once, and lets them sign in no more', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const { user, browser: removed } = await signedIn(cloud, owner.tenantId, 'admin')
    expect((await removed.call('GET', '/webhooks')).statusCode).toBe(200)
    const res = await browser.call('DELETE', `/users/${user.id}`)
    expect(res.statusCode, res.body).toBe(204)
    expect(problemOf(await removed.call('GET', '/webhooks'))).toEqual({
      status: 401,
      code: 'session_expired',
    })
    expect(problemOf(await signInRequest(cloud, user.email, user.password))).toEqual({
      status: 401,
      code: 'invalid_credentials',
    })
    expect(problemOf(await browser.call('DELETE', `/users/${user.id}`))).toEqual({
      status: 404,
      code: 'console_user_not_found',
    })
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'console_user.removed' })
    expect(audit.data[0]).toMatchObject({
      actor: `console_user:${owner.id}`,
      target: { type: 'console_user', id: user.id },
      // The session of the first sign-in (the password change keeps it), and this one.
      details: { email: user.email, role: 'admin', sessionsEnded: 2 },
    })
    // The email is free again.
    expect((await invite(browser, user.email, 'viewer')).statusCode).toBe(201)
  })

  it('never removes the last owner, not even at their own request; another owner may', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    expect(problemOf(await browser.call('DELETE', `/users/${owner.id}`))).toEqual({
      status: 409,
      code: 'last_owner',
    })
    const { user: second, browser: secondBrowser } = await signedIn(cloud, owner.tenantId, 'owner')
    expect((await secondBrowser.call('DELETE', `/users/${owner.id}`)).statusCode).toBe(204)
    expect(problemOf(await secondBrowser.call('DELETE', `/users/${second.id}`))).toEqual({
      status: 409,
      code: 'last_owner',
    })
    expect((await secondBrowser.call('GET', '/session')).statusCode).toBe(200)
  })

  it('keeps an owner when two owners remove each other at the same moment', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const { user: second, browser: secondBrowser } = await signedIn(cloud, owner.tenantId, 'owner')
    const results = await Promise.all([
      browser.call('DELETE', `/users/${second.id}`),
      secondBrowser.call('DELETE', `/users/${owner.id}`),
    ])
    // One wins. The other finds itself the last owner (409), or already removed (401: its session ended).
    const statuses = results.map((r) => r.statusCode).sort()
    expect([
      [204, 401],
      [204, 409],
    ]).toContainEqual(statuses)
    const owners = (await cloud.services.consoleUsers.list(owner.tenantId, {})).data.filter(
      (u) => u.role === 'owner',
    )
    expect(owners).toHaveLength(1)
  })

  it('never finds another tenant’s user', async () => {
    const { browser } = await signedInOwner(cloud)
    const { owner: stranger } = await signedInOwner(cloud)
    const theirViewer = await newUser(cloud, stranger.tenantId, 'viewer')
    for (const id of [stranger.id, theirViewer.id]) {
      expect(problemOf(await browser.call('DELETE', `/users/${id}`))).toEqual({
        status: 404,
        code: 'console_user_not_found',
      })
    }
    expect((await signInRequest(cloud, theirViewer.email, theirViewer.password)).statusCode).toBe(200)
  })

  it('lets an admin token (a script) manage users as an admin would', async () => {
    const { owner } = await signedInOwner(cloud)
    const { id: tokenId, token } = await cloud.services.adminTokens.create(owner.tenantId, {}, TEST_ACTOR)
    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
      cloud.app.inject({
        method,
        url: `${CONSOLE}${url}`,
        headers: bearer(token),
        ...(payload ? { payload } : {}),
      })
    const res = await call('POST', '/users', { email: uniqueEmail('scripted'), role: 'viewer' })
    expect(res.statusCode, res.body).toBe(201)
    expect(problemOf(await call('POST', '/users', { email: uniqueEmail('o'), role: 'owner' }))).toEqual({
      status: 403,
      code: 'insufficient_role',
    })
    expect(problemOf(await call('DELETE', `/users/${owner.id}`))).toEqual({
      status: 403,
      code: 'insufficient_role',
    })
    expect((await call('DELETE', `/users/${res.json().user.id}`)).statusCode).toBe(204)
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'console_user.invited' })
    expect(audit.data[0]?.actor).toBe(`admin_token:${tokenId}`)
  })
})

describeEachDatabase('console password change and the must-change gate', (cloud) => {
  /** A user just invited, signed in with the one-time password. */
  async function invited(): Promise<{ user: TestUser; browser: Browser }> {
    const owner = await newTenant(cloud)
    const email = uniqueEmail('new')
    const { user, temporaryPassword } = await cloud.services.consoleUsers.invite(
      owner.tenantId,
      { email, role: 'admin' },
      { role: 'owner', actor: TEST_ACTOR },
    )
    const u = { tenantId: owner.tenantId, id: user.id, email, password: temporaryPassword }
    return { user: u, browser: await signIn(cloud, email, temporaryPassword) }
  }

  it('answers 403 password_change_required on every console API route until the password is changed', async () => {
    const { user, browser } = await invited()
    for (const [method, path] of [
      ['GET', '/webhooks'],
      ['GET', '/users'],
      ['GET', '/webhook-deliveries'],
      ['POST', '/users'],
    ] as const) {
      const res = await browser.call(
        method,
        path,
        method === 'POST' ? { body: { email: uniqueEmail('x'), role: 'viewer' } } : {},
      )
      expect(problemOf(res), `${method} ${path}`).toEqual({ status: 403, code: 'password_change_required' })
    }
    const session = await browser.call('GET', '/session')
    expect(session.statusCode).toBe(200)
    expect(session.json().user.mustChangePassword).toBe(true)

    const changed = await browser.call('POST', '/session/password', {
      body: { currentPassword: user.password, newPassword: 'correct horse battery staple' },
    })
    expect(changed.statusCode, changed.body).toBe(204)
    expect((await browser.call('GET', '/session')).json().user.mustChangePassword).toBe(false)
    expect((await browser.call('GET', '/webhooks')).statusCode).toBe(200)
  })

  it('lets a user who must change their password sign out', async () => {
    const { browser } = await invited()
    expect((await browser.call('DELETE', '/session')).statusCode).toBe(204)
    expect((await browser.call('GET', '/session')).statusCode).toBe(401)
  })

  it('changes the password: the old one fails, the new one works, other sessions end, this one goes on', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const other = await signIn(cloud, owner.email, owner.password)
    const newPassword = 'another long passphrase'
    const res = await browser.call('POST', '/session/password', {
      body: { currentPassword: owner.password, newPassword },
    })
    expect(res.statusCode, res.body).toBe(204)
    expect((await browser.call('GET', '/session')).statusCode).toBe(200)
    expect(problemOf(await other.call('GET', '/session'))).toEqual({ status: 401, code: 'session_expired' })
    expect((await signInRequest(cloud, owner.email, owner.password)).statusCode).toBe(401)
    expect((await signInRequest(cloud, owner.email, newPassword)).statusCode).toBe(200)
    const audit = await cloud.services.audit.list(owner.tenantId, { action: 'console_user.password_changed' })
    expect(audit.data[0]).toMatchObject({
      actor: `console_user:${owner.id}`,
      target: { type: 'console_user', id: owner.id },
      // `other`, and the session of the first sign-in (signedInOwner signs in twice).
      details: { otherSessionsEnded: 2 },
    })
    expect(JSON.stringify(audit.data)).not.toContain(newPassword)
  })

  it('refuses a wrong current password, a short one, the same one, and the email', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    const change = (currentPassword: string, newPassword: string) =>
      browser.call('POST', '/session/password', { body: { currentPassword, newPassword } })
    expect(problemOf(await change('not it at all', 'a fine new password'))).toEqual({
      status: 403,
      code: 'current_password_incorrect',
    })
    expect(problemOf(await change(owner.password, 'short'))).toEqual({
      status: 400,
      code: 'validation_failed',
    })
    const same = await change(owner.password, owner.password)
    expect(problemOf(same)).toEqual({ status: 400, code: 'validation_failed' })
    expect(same.json().errors).toEqual([
      { in: 'body', pointer: '#/newPassword', message: expect.any(String) },
    ])
    expect(problemOf(await change(owner.password, owner.email.toUpperCase()))).toEqual({
      status: 400,
      code: 'validation_failed',
    })
    // Nothing changed.
    expect((await signInRequest(cloud, owner.email, owner.password)).statusCode).toBe(200)
  })

  it('delays wrong current passwords like failed sign-ins, so a stolen session cannot guess the password', async () => {
    const { owner, browser } = await signedInOwner(cloud)
    for (let i = 0; i <= SIGN_IN_DELAYS.accountFromAddress.free; i++) {
      const res = await browser.call('POST', '/session/password', {
        body: { currentPassword: `guess ${i}`, newPassword: 'a fine new password' },
      })
      expect(problemOf(res)).toEqual({ status: 403, code: 'current_password_incorrect' })
    }
    const held = await browser.call('POST', '/session/password', {
      body: { currentPassword: owner.password, newPassword: 'a fine new password' },
    })
    expect(problemOf(held)).toEqual({ status: 429, code: 'login_locked' })
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(0)
    // The session's address waits; the owner elsewhere does not.
    expect((await signInRequest(cloud, owner.email, owner.password)).statusCode).toBe(200)
  })
})
