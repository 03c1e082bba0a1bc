/**
 * Sign-in (docs/decisions/0071-console-sign-in-delays.md): users sign in with an email and a password
 * (scrypt); a wrong email and a wrong password are answered alike; repeated failures earn growing delays for
 * the email from an address, the email from the addresses that failed, and an address, across instances;
 * every sign-in and failed sign-in is audited, and no password reaches the audit log or the logs.
 */
import { Writable } from 'node:stream'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../../../cloud/app.js'
import { SESSION_IDLE_SECONDS } from '../../../../cloud/features/sessions/service.js'
import { delayAfter, SIGN_IN_DELAYS } from '../../../../cloud/features/sign-in-throttle/sign-in-delays.js'
import {
  DUMMY_PASSWORD_HASH,
  hashPassword,
  verifyPassword,
} from '../../../../cloud/features/users/password.js'
import { loggerOptions } from '../../../../cloud/logger-options.js'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import {
  activate,
  CONSOLE,
  newTenant,
  newUser,
  problemOf,
  sessionCookieOf,
  signIn,
  signInRequest,
  someAddress,
  uniqueEmail,
} from './session-kit.js'

describeEachDatabase('console sign-in', (cloud) => {
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  it('signs the first owner in with the one-time password of tenant create, who must then change it', async () => {
    const owner = await newTenant(cloud)
    const res = await signInRequest(cloud, owner.email, owner.password)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['cache-control']).toBe('no-store')
    const body = res.json()
    expect(body).toEqual({
      user: {
        id: owner.id,
        email: owner.email,
        role: 'owner',
        mustChangePassword: true,
        createdAt: expect.any(String),
        lastSignInAt: expect.any(String),
      },
      tenant: { id: owner.tenantId, name: expect.any(String), timeZone: 'Asia/Kolkata' },
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    })
    const cookie = sessionCookieOf(res)
    expect(cookie?.value).toMatch(/^hjw_[0-9A-Za-z]{46}$/)

    const activated = await activate(cloud, owner)
    const again = await signInRequest(cloud, owner.email, activated.password)
    expect(again.json().user.mustChangePassword).toBe(false)
    // The one-time password is good no more.
    expect(problemOf(await signInRequest(cloud, owner.email, owner.password))).toEqual({
      status: 401,
      code: 'invalid_credentials',
    })
  })

  it('takes the email in any case and with surrounding spaces, as tenant create stores it', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    const res = await signInRequest(cloud, `  ${user.email.toUpperCase()} `, user.password)
    expect(res.statusCode, res.body).toBe(200)
  })

  it('answers a wrong password and an unknown email the same way, and stores the failure only for the user', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    const wrongPassword = await signInRequest(cloud, user.email, 'not the password at all')
    const unknownEmail = await signInRequest(cloud, uniqueEmail('nobody'), user.password)
    for (const res of [wrongPassword, unknownEmail]) {
      expect(problemOf(res)).toEqual({ status: 401, code: 'invalid_credentials' })
      expect(sessionCookieOf(res)).toBeUndefined()
    }
    const strip = (body: Record<string, unknown>) => ({ ...body, instance: undefined })
    expect(strip(unknownEmail.json())).toEqual(strip(wrongPassword.json()))
    expect(Object.keys(unknownEmail.headers).sort()).toEqual(Object.keys(wrongPassword.headers).sort())

    const audit = await cloud.services.audit.list(user.tenantId, { action: 'console_user.sign_in_failed' })
    expect(audit.data).toHaveLength(1)
    expect(audit.data[0]).toMatchObject({
      actor: 'anonymous',
      target: { type: 'console_user', id: user.id },
      details: { email: user.email, retryAfterSeconds: 0 },
    })
    expect(JSON.stringify(audit.data)).not.toContain('not the password at all')
  })

  it('records each sign-in in the audit log, with the user as actor and the address', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    const res = await signInRequest(cloud, user.email, user.password, { remoteAddress: '198.51.100.77' })
    expect(res.statusCode).toBe(200)
    const audit = await cloud.services.audit.list(user.tenantId, { action: 'console_user.signed_in' })
    expect(audit.data[0]).toMatchObject({
      actor: `console_user:${user.id}`,
      ip: '198.51.100.77',
      target: { type: 'console_user', id: user.id },
    })
  })

  it('refuses malformed sign-ins with 400 before any password is checked', async () => {
    for (const payload of [
      {},
      { email: 'a@b.c' },
      { email: 'a@b.c', password: '' },
      { email: 'a\u0000@b.c', password: 'x' },
    ]) {
      const res = await cloud.app.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        payload,
        remoteAddress: someAddress(),
      })
      expect(problemOf(res), JSON.stringify(payload)).toEqual({ status: 400, code: 'validation_failed' })
    }
  })

  it('holds an email back from the address that failed, longer after each failure, and not from elsewhere', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    const address = someAddress()
    const start = cloud.now()
    cloud.fixedNow = start
    const free = SIGN_IN_DELAYS.accountFromAddress.free
    for (let i = 0; i <= free; i++) {
      const res = await signInRequest(cloud, user.email, `wrong ${i}`, { remoteAddress: address })
      expect(problemOf(res), `failure ${i + 1}`).toEqual({ status: 401, code: 'invalid_credentials' })
    }
    const held = await signInRequest(cloud, user.email, user.password, { remoteAddress: address })
    expect(problemOf(held)).toEqual({ status: 429, code: 'login_locked' })
    expect(held.headers['retry-after']).toBe('1')
    expect(sessionCookieOf(held)).toBeUndefined()
    // Elsewhere, the user signs in as ever.
    expect((await signInRequest(cloud, user.email, user.password)).statusCode).toBe(200)

    // The audit log says what each failure cost.
    const failed = await cloud.services.audit.list(user.tenantId, { action: 'console_user.sign_in_failed' })
    expect(failed.data.map((e) => e.details.retryAfterSeconds)).toEqual([1, 0, 0, 0])
  })

  it('lets no more than the free guesses of a concurrent burst be checked: each is counted before its password', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    const address = someAddress()
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        signInRequest(cloud, user.email, `burst guess ${i}`, { remoteAddress: address }),
      ),
    )
    const statuses = burst.map((r) => problemOf(r))
    const checked = SIGN_IN_DELAYS.accountFromAddress.free + 1
    expect(statuses.filter((p) => p.code === 'invalid_credentials')).toHaveLength(checked)
    expect(statuses.filter((p) => p.code === 'login_locked')).toHaveLength(12 - checked)
  })

  it('forgets failures after a successful sign-in, and after the 24-hour window', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    const address = someAddress()
    const start = cloud.now()
    cloud.fixedNow = start
    const fail = async (n: number) => {
      for (let i = 0; i < n; i++)
        expect((await signInRequest(cloud, user.email, 'wrong', { remoteAddress: address })).statusCode).toBe(
          401,
        )
    }
    const free = SIGN_IN_DELAYS.accountFromAddress.free
    await fail(free)
    expect(
      (await signInRequest(cloud, user.email, user.password, { remoteAddress: address })).statusCode,
    ).toBe(200)
    await fail(free + 1)
    cloud.fixedNow = start + SIGN_IN_DELAYS.windowSeconds * 1_000_000
    await fail(free)
    // Only the free failures in this window: no wait.
    expect(
      (await signInRequest(cloud, user.email, user.password, { remoteAddress: address })).statusCode,
    ).toBe(200)
  })

  it('holds back an email that is nobody’s exactly like a user’s, so a wait says nothing about who exists', async () => {
    const email = uniqueEmail('nobody')
    const address = someAddress()
    for (let i = 0; i <= SIGN_IN_DELAYS.accountFromAddress.free; i++)
      expect((await signInRequest(cloud, email, 'guess', { remoteAddress: address })).statusCode).toBe(401)
    const res = await signInRequest(cloud, email, 'guess', { remoteAddress: address })
    expect(problemOf(res)).toEqual({ status: 429, code: 'login_locked' })
    expect(res.headers['retry-after']).toBe('1')
  })

  it('holds back addresses that have failed for an email by the email’s count, never an address that has not', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    cloud.fixedNow = cloud.now()
    const free = SIGN_IN_DELAYS.accountFromAddress.free
    const guessers = [someAddress(), someAddress(), someAddress(), someAddress()]
    // 4 × 3 failures: each address within its own free ones, the email past its 10.
    for (const address of guessers)
      for (let i = 0; i < free; i++)
        expect((await signInRequest(cloud, user.email, 'guess', { remoteAddress: address })).statusCode).toBe(
          401,
        )
    const held = await signInRequest(cloud, user.email, user.password, { remoteAddress: guessers[0] })
    expect(problemOf(held)).toEqual({ status: 429, code: 'login_locked' })
    expect(held.headers['retry-after']).toBe('2')
    expect(
      (await signInRequest(cloud, user.email, user.password, { remoteAddress: someAddress() })).statusCode,
    ).toBe(200)
  })

  it('holds back an address that fails for many emails (password spraying), not the users elsewhere', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    // Fifty failures take more than a minute under the per-minute request limit: this instance has none.
    const app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
      database: cloud.database,
      closeDatabase: false,
      logger: false,
      now: cloud.now,
      signInsPerIpPerMinute: 1_000_000,
    })
    cloud.fixedNow = cloud.now()
    const address = someAddress()
    const attempt = (email: string, password: string) =>
      app.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        payload: { email, password },
        remoteAddress: address,
      })
    try {
      for (let i = 0; i <= SIGN_IN_DELAYS.address.free; i++) {
        const res = await attempt(uniqueEmail(`spray${i}`), 'Winter2026!')
        expect(res.statusCode, `attempt ${i + 1}: ${res.body}`).toBe(401)
      }
      const res = await attempt(user.email, user.password)
      expect(problemOf(res)).toEqual({ status: 429, code: 'login_locked' })
      expect(res.headers['retry-after']).toBe('1')
      // From elsewhere, the user signs in as ever: the address waits, not the email.
      expect((await signInRequest(cloud, user.email, user.password)).statusCode).toBe(200)
    } finally {
      await app.close()
    }
  }, 60_000)

  it('holds the delays in the database: another instance of the service refuses the same attempt too', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'admin')
    const address = someAddress()
    cloud.fixedNow = cloud.now()
    for (let i = 0; i <= SIGN_IN_DELAYS.accountFromAddress.free; i++)
      expect((await signInRequest(cloud, user.email, 'wrong', { remoteAddress: address })).statusCode).toBe(
        401,
      )
    const other = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
      database: cloud.database,
      closeDatabase: false,
      logger: false,
      now: cloud.now,
    })
    try {
      const res = await other.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        payload: { email: user.email, password: user.password },
        remoteAddress: address,
      })
      expect(problemOf(res)).toEqual({ status: 429, code: 'login_locked' })
    } finally {
      await other.close()
    }
  })

  it('limits sign-in requests per address and minute, right or wrong', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    const address = someAddress()
    let limited: Awaited<ReturnType<typeof signInRequest>> | undefined
    for (let i = 0; i < 40 && !limited; i++) {
      const res = await signInRequest(cloud, user.email, user.password, { remoteAddress: address })
      if (res.statusCode === 429) limited = res
      else expect(res.statusCode).toBe(200)
    }
    expect(limited && problemOf(limited)).toEqual({ status: 429, code: 'rate_limited' })
    expect(limited?.headers['retry-after']).toBeDefined()
  }, 60_000)

  it('ends the session a browser still held when it signs in again', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    const first = await signIn(cloud, user.email, user.password)
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${CONSOLE}/session`,
      payload: { email: user.email, password: user.password },
      cookies: { hajri_session: first.cookie },
      remoteAddress: someAddress(),
    })
    expect(res.statusCode).toBe(200)
    expect(sessionCookieOf(res)?.value).not.toBe(first.cookie)
    expect(problemOf(await first.call('GET', '/session'))).toEqual({ status: 401, code: 'session_expired' })
  })

  it('keeps a session alive while it is used', async () => {
    const user = await newUser(cloud, (await newTenant(cloud)).tenantId, 'viewer')
    const start = cloud.now()
    cloud.fixedNow = start
    const browser = await signIn(cloud, user.email, user.password)
    for (let hour = 1; hour <= 4; hour++) {
      cloud.fixedNow = start + hour * (SESSION_IDLE_SECONDS - 600) * 1_000_000
      expect((await browser.call('GET', '/session')).statusCode, `after ${hour} idle periods`).toBe(200)
    }
  })
})

/** A pino destination that keeps every line in memory. */
class MemoryLog extends Writable {
  text = ''
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8')
    done()
  }
}

describeEachDatabase('console sign-in in the logs', (cloud) => {
  it('never writes a password, the session cookie or the CSRF token to the log, even at trace', async () => {
    const log = new MemoryLog()
    const app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'trace' },
      database: cloud.database,
      closeDatabase: false,
      logger: pino(loggerOptions('trace'), log),
      now: cloud.now,
    })
    try {
      const owner = await newTenant(cloud)
      const wrong = 'Wrong-Password-5f2a9c'
      const newPassword = 'A-New-Password-b81e44'
      const send = (method: 'GET' | 'POST', url: string, options: object = {}) =>
        app.inject({ method, url: `${CONSOLE}${url}`, remoteAddress: someAddress(), ...options })
      expect(
        (await send('POST', '/session', { payload: { email: owner.email, password: wrong } })).statusCode,
      ).toBe(401)
      const res = await send('POST', '/session', {
        payload: { email: owner.email, password: owner.password },
      })
      expect(res.statusCode).toBe(200)
      const cookie = sessionCookieOf(res)?.value as string
      const csrf = res.json().csrfToken as string
      const change = await send('POST', '/session/password', {
        cookies: { hajri_session: cookie },
        headers: { 'x-csrf-token': csrf },
        payload: { currentPassword: owner.password, newPassword },
      })
      expect(change.statusCode, change.body).toBe(204)
      expect(log.text).toContain('console sign-in refused')
      expect(log.text).toContain('console user signed in')
      for (const secret of [wrong, owner.password, newPassword, cookie, csrf, cookie.slice(4, -6)])
        expect(log.text.includes(secret), `${secret} in the log`).toBe(false)
    } finally {
      await app.close()
    }
  })
})

describe('the hash an unknown email is checked against', () => {
  it('has the shape and cost of a real one, so that checking it takes as long (scrypt runs)', async () => {
    const real = (await hashPassword('anything')).split('$')
    const dummy = DUMMY_PASSWORD_HASH.split('$')
    expect(dummy.slice(0, 4)).toEqual(real.slice(0, 4))
    expect(dummy.map((part) => part.length)).toEqual(real.map((part) => part.length))
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false)
  })
})

describe('sign-in delay settings', () => {
  it('exports the delays docs/development/security.md documents (review #8)', () => {
    expect(SIGN_IN_DELAYS).toEqual({
      accountFromAddress: { free: 3, firstDelaySeconds: 1, maxDelaySeconds: 900 },
      account: { free: 10, firstDelaySeconds: 1, maxDelaySeconds: 900 },
      address: { free: 50, firstDelaySeconds: 1, maxDelaySeconds: 900 },
      windowSeconds: 86_400,
    })
    expect([3, 4, 5, 6, 13, 14, 100].map((n) => delayAfter(n, SIGN_IN_DELAYS.accountFromAddress))).toEqual([
      0, 1, 2, 4, 512, 900, 900,
    ])
  })
})
