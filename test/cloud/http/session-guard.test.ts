/**
 * State changes are protected against CSRF, a foreign origin included
 * (docs/decisions/0046-console-csrf.md). Beside SameSite=Strict, every state-changing request made with the
 * session cookie must echo the session's CSRF token (OWASP synchronizer token pattern), and any request made
 * with the cookie from a page of another origin is refused.
 */
import { expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { describeEachDatabase } from '../../support/cloud-harness.js'
import {
  browserFor,
  CONSOLE,
  newTenant,
  problemOf,
  sessionCookieOf,
  signedInOwner,
} from '../features/sessions/session-kit.js'

// app.inject sends Host: localhost:80; a browser names that origin http://localhost.
const OWN_ORIGIN = 'http://localhost'
const FOREIGN = [
  'https://evil.example',
  'http://localhost:8081',
  'https://localhost',
  'null',
  'http://localhost.evil.example',
]

describeEachDatabase('console CSRF protection', (cloud) => {
  it('refuses a change made with the cookie but without the X-CSRF-Token header, and changes nothing', async () => {
    const { browser } = await signedInOwner(cloud)
    const res = await browser.call('POST', '/webhooks', {
      body: { url: 'https://hooks.example.com/x' },
      csrf: null,
    })
    expect(problemOf(res)).toEqual({ status: 403, code: 'csrf_failed' })
    expect((await browser.call('GET', '/webhooks')).json().data).toEqual([])
  })

  it('refuses a wrong token, another session’s token, and an empty one', async () => {
    const { browser } = await signedInOwner(cloud)
    const { browser: stranger } = await signedInOwner(cloud)
    for (const csrf of [
      'wrong',
      stranger.csrfToken,
      '',
      browser.csrfToken.slice(0, -1),
      `${browser.csrfToken} `,
    ]) {
      for (const [method, path, body] of [
        ['POST', '/webhooks', { url: 'https://hooks.example.com/x' }],
        ['POST', '/users', { email: 'someone@example.test', role: 'viewer' }],
        ['DELETE', '/session', undefined],
        ['POST', '/session/password', { currentPassword: 'x', newPassword: 'long enough password' }],
      ] as const) {
        const res = await browser.call(method, path, { csrf, ...(body ? { body } : {}) })
        expect(problemOf(res), `${method} ${path} with "${csrf}"`).toEqual({
          status: 403,
          code: 'csrf_failed',
        })
      }
    }
    // Sign-out was refused every time: the session lives.
    expect((await browser.call('GET', '/session')).statusCode).toBe(200)
  })

  it('accepts a change with the right token, and reads without one', async () => {
    const { browser } = await signedInOwner(cloud)
    const created = await browser.call('POST', '/webhooks', { body: { url: 'https://hooks.example.com/ok' } })
    expect(created.statusCode, created.body).toBe(201)
    expect((await browser.call('GET', '/webhooks', { csrf: null })).statusCode).toBe(200)
    expect((await browser.call('GET', '/session', { csrf: null })).statusCode).toBe(200)
  })

  it('refuses any request with the cookie from a foreign Origin, even with the right token, even a read', async () => {
    const { browser } = await signedInOwner(cloud)
    for (const origin of FOREIGN) {
      for (const [method, path] of [
        ['GET', '/session'],
        ['GET', '/webhooks'],
        ['POST', '/webhooks'],
        ['DELETE', '/session'],
      ] as const) {
        const res = await browser.call(method, path, {
          headers: { origin },
          ...(method === 'POST' ? { body: { url: 'https://hooks.example.com/x' } } : {}),
        })
        expect(problemOf(res), `${method} ${path} from ${origin}`).toEqual({
          status: 403,
          code: 'csrf_failed',
        })
      }
    }
    expect((await browser.call('GET', '/webhooks')).json().data).toEqual([])
    expect((await browser.call('GET', '/session')).statusCode).toBe(200)
  })

  it('accepts its own origin', async () => {
    const { browser } = await signedInOwner(cloud)
    const headers = { origin: OWN_ORIGIN }
    expect((await browser.call('GET', '/session', { headers })).statusCode).toBe(200)
    const res = await browser.call('POST', '/webhooks', {
      headers,
      body: { url: 'https://hooks.example.com/same' },
    })
    expect(res.statusCode, res.body).toBe(201)
    expect((await browser.call('DELETE', '/session', { headers })).statusCode).toBe(204)
  })

  it('refuses a sign-in posted from a foreign page (login CSRF), and takes one from its own', async () => {
    const owner = await newTenant(cloud)
    const signIn = (origin: string) =>
      cloud.app.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        headers: { origin },
        payload: { email: owner.email, password: owner.password },
      })
    for (const origin of FOREIGN) {
      const res = await signIn(origin)
      expect(problemOf(res), origin).toEqual({ status: 403, code: 'csrf_failed' })
      expect(sessionCookieOf(res)).toBeUndefined()
    }
    expect((await signIn(OWN_ORIGIN)).statusCode).toBe(200)
  })

  it('takes HAJRI_PUBLIC_URL as its origin when set, rather than the Host header', async () => {
    const owner = await newTenant(cloud)
    const app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        publicUrl: 'https://hajri.example.com',
      },
      database: cloud.database,
      closeDatabase: false,
      logger: false,
      now: cloud.now,
    })
    try {
      const signIn = (origin: string) =>
        app.inject({
          method: 'POST',
          url: `${CONSOLE}/session`,
          headers: { origin },
          payload: { email: owner.email, password: owner.password },
        })
      expect(problemOf(await signIn(OWN_ORIGIN))).toEqual({ status: 403, code: 'csrf_failed' })
      const res = await signIn('https://hajri.example.com')
      expect(res.statusCode, res.body).toBe(200)
      const browser = browserFor(cloud, sessionCookieOf(res)?.value as string, res.json().csrfToken, owner.id)
      const foreign = await app.inject({
        method: 'GET',
        url: `${CONSOLE}/session`,
        headers: { origin: 'http://localhost' },
        cookies: { hajri_session: browser.cookie },
      })
      expect(problemOf(foreign)).toEqual({ status: 403, code: 'csrf_failed' })
    } finally {
      await app.close()
    }
  })
})
