/**
 * OWASP API2:2023 Broken Authentication: expired, revoked and tampered credentials;
 * constant-time comparisons; token endpoint brute force. Every kind of credential (API key, OAuth
 * access token, admin token, console session, OAuth client secret, console password) is tried
 * expired, revoked, with one character changed, forged with a valid checksum, truncated and swapped
 * for a credential of another kind: each is a 401 with its challenge. The secrets are checked by
 * their SHA-256 (a lookup) or with crypto.timingSafeEqual, which these tests watch being used; and
 * guessing at the token endpoint and the console's sign-in runs into a 429.
 */
import * as crypto from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import {
  ACCESS_TOKEN,
  API_KEY,
  CLIENT_SECRET,
  generateSecret,
  type SecretKind,
} from '../../../cloud/auth/secret-format.js'
import { ADMIN_TOKEN } from '../../../cloud/features/admin-tokens/service.js'
import { AdminTokenStore } from '../../../cloud/features/admin-tokens/store.js'
import { ApiKeyStore } from '../../../cloud/features/api-keys/store.js'
import { OAuthAppStore } from '../../../cloud/features/oauth/app-store.js'
import { TokenStore } from '../../../cloud/features/oauth/token-store.js'
import { CONSOLE_SESSION, SESSION_IDLE_SECONDS } from '../../../cloud/features/sessions/service.js'
import { ConsoleSessionStore } from '../../../cloud/features/sessions/store.js'
import { ACCESS_TOKEN_TTL_SECONDS } from '../../../shared/oauth.js'
import { bearer, describeEachDatabase, TEST_ACTOR } from '../../support/cloud-harness.js'
import { SESSION_COOKIE, signInRequest, someAddress } from '../features/sessions/session-kit.js'
import {
  CONSOLE,
  codeOf,
  createTenantFixture,
  freshSession,
  OAUTH,
  PUBLIC,
  type TenantFixture,
} from './security-kit.js'

// Watch crypto.timingSafeEqual: the cloud's constant-time comparisons must go through it.
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})

const SECOND = 1_000_000
const BEARER_INVALID = 'Bearer realm="hajri", error="invalid_token"'
const EMPLOYEES = `${PUBLIC}/employees`
const WEBHOOKS = `${CONSOLE}/webhooks`

/** One character of the random part changed: the checksum no longer matches. */
function oneCharacterChanged(secret: string, prefixLength: number): string {
  const i = prefixLength + 5
  const c = secret[i] === 'A' ? 'B' : 'A'
  return secret.slice(0, i) + c + secret.slice(i + 1)
}

/** The ways a stolen, guessed or mangled secret of `kind` may arrive, by name. */
function mangled(secret: string, kind: SecretKind): Record<string, string> {
  return {
    'one character changed': oneCharacterChanged(secret, kind.prefix.length),
    'forged with a valid checksum': generateSecret(kind),
    'truncated by one character': secret.slice(0, -1),
    'truncated to its prefix and six characters': secret.slice(0, kind.prefix.length + 6),
    'with a character added': `${secret}A`,
  }
}

function expectRefused(res: LightMyRequestResponse, label: string, code: string, challenge: string | RegExp) {
  expect(res.statusCode, `${label}: ${res.body}`).toBe(401)
  expect(codeOf(res), label).toBe(code)
  const header = res.headers['www-authenticate']
  if (typeof challenge === 'string') expect(header, label).toBe(challenge)
  else expect(header, label).toMatch(challenge)
}

describeEachDatabase('OWASP API2: expired, revoked, tampered and misplaced credentials', (cloud) => {
  let t: TenantFixture

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
  }, 60_000)
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const publicCall = (token: string) =>
    cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(token) })
  const consoleCall = (token: string) =>
    cloud.app.inject({ method: 'GET', url: WEBHOOKS, headers: bearer(token) })
  const withCookie = (url: string, cookie: string) =>
    cloud.app.inject({ method: 'GET', url, cookies: { [SESSION_COOKIE]: cookie } })

  /** Moves the app's clock on, past a credential's end. */
  const later = (seconds: number) => {
    cloud.fixedNow = cloud.now() + seconds * SECOND
  }

  it('refuses API keys that expired, were revoked, were mangled, or are another kind of credential', async () => {
    expect((await publicCall(t.apiKey)).statusCode).toBe(200)
    const refused: Record<string, string> = {
      ...mangled(t.apiKey, API_KEY),
      'an admin token': t.adminToken,
      'a console session secret': t.session.cookie,
      'an OAuth client secret': t.client.clientSecret,
      'a client id': t.client.clientId,
    }
    for (const [label, token] of Object.entries(refused))
      expectRefused(await publicCall(token), label, 'invalid_credential', BEARER_INVALID)

    const revoked = await cloud.services.apiKeys.create(t.id, { scopes: ['employees:read'] }, TEST_ACTOR)
    await cloud.services.apiKeys.revoke(t.id, revoked.id, TEST_ACTOR)
    expectRefused(await publicCall(revoked.key), 'revoked', 'invalid_credential', BEARER_INVALID)

    const expiring = await cloud.createApiKey(t.id, ['employees:read'], { expiresInSeconds: 60 })
    expect((await publicCall(expiring)).statusCode).toBe(200)
    later(60)
    expectRefused(await publicCall(expiring), 'expired', 'invalid_credential', BEARER_INVALID)
  })

  it('refuses OAuth access tokens that expired, were revoked, belong to a revoked app, or were mangled', async () => {
    for (const [label, token] of Object.entries(mangled(t.oauthToken, ACCESS_TOKEN)))
      expectRefused(await publicCall(token), label, 'invalid_credential', BEARER_INVALID)

    const app = await cloud.services.oauthApps.create(
      t.id,
      { name: 'api2', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const token = async () => {
      const res = await cloud.app.inject({
        method: 'POST',
        url: `${OAUTH}/token`,
        payload: {
          grant_type: 'client_credentials',
          client_id: app.clientId,
          client_secret: app.clientSecret,
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().access_token as string
    }
    const revoked = await token()
    const revoke = await cloud.app.inject({
      method: 'POST',
      url: `${OAUTH}/revoke`,
      payload: { token: revoked, client_id: app.clientId, client_secret: app.clientSecret },
    })
    expect(revoke.statusCode).toBe(200)
    expectRefused(await publicCall(revoked), 'revoked (RFC 7009)', 'invalid_credential', BEARER_INVALID)

    const expiring = await token()
    expect((await publicCall(expiring)).statusCode).toBe(200)
    later(ACCESS_TOKEN_TTL_SECONDS)
    expectRefused(await publicCall(expiring), 'expired', 'invalid_credential', BEARER_INVALID)
    cloud.fixedNow = undefined

    const ofRevokedApp = await token()
    await cloud.services.oauthApps.revoke(t.id, app.id, TEST_ACTOR)
    expectRefused(await publicCall(ofRevokedApp), 'of a revoked app', 'invalid_credential', BEARER_INVALID)
  })

  it('refuses admin tokens that expired, were revoked, were mangled, or are another kind of credential', async () => {
    expect((await consoleCall(t.adminToken)).statusCode).toBe(200)
    const refused: Record<string, string> = {
      ...mangled(t.adminToken, ADMIN_TOKEN),
      'an API key': t.apiKey,
      'an OAuth access token': t.oauthToken,
      'a console session secret': t.session.cookie,
    }
    for (const [label, token] of Object.entries(refused))
      expectRefused(await consoleCall(token), label, 'invalid_credential', BEARER_INVALID)

    const revoked = await cloud.services.adminTokens.create(t.id, {}, TEST_ACTOR)
    await cloud.services.adminTokens.revoke(t.id, revoked.id, TEST_ACTOR)
    expectRefused(await consoleCall(revoked.token), 'revoked', 'invalid_credential', BEARER_INVALID)

    const expiring = await cloud.services.adminTokens.create(t.id, { expiresInSeconds: 60 }, TEST_ACTOR)
    expect((await consoleCall(expiring.token)).statusCode).toBe(200)
    later(60)
    expectRefused(await consoleCall(expiring.token), 'expired', 'invalid_credential', BEARER_INVALID)
  })

  it('refuses console sessions that were signed out, went idle, were mangled, or hold another credential', async () => {
    // The console API challenges for its token; the session routes for the cookie.
    const targets = [
      { url: WEBHOOKS, challenge: /^Bearer realm="hajri"$/ },
      { url: `${CONSOLE}/session`, challenge: /^Cookie realm="hajri"/ },
    ]
    const { browser } = await freshSession(cloud, t)
    const refused: Record<string, string> = {
      ...mangled(browser.cookie, CONSOLE_SESSION),
      'an admin token': t.adminToken,
      'an API key': t.apiKey,
    }
    for (const { url, challenge } of targets) {
      expect((await withCookie(url, browser.cookie)).statusCode).toBe(200)
      for (const [label, cookie] of Object.entries(refused))
        expectRefused(await withCookie(url, cookie), `${url} ${label}`, 'session_expired', challenge)
    }

    const signedOut = await freshSession(cloud, t)
    const out = await signedOut.browser.call('DELETE', '/session')
    expect(out.statusCode).toBe(204)
    for (const { url, challenge } of targets)
      expectRefused(
        await withCookie(url, signedOut.browser.cookie),
        'signed out',
        'session_expired',
        challenge,
      )

    const idle = await freshSession(cloud, t)
    later(SESSION_IDLE_SECONDS)
    expectRefused(
      await withCookie(WEBHOOKS, idle.browser.cookie),
      'idle',
      'session_expired',
      targets[0]?.challenge as RegExp,
    )
  })

  it('refuses OAuth client secrets that are wrong, mangled, rotated out, or of a revoked app', async () => {
    const app = await cloud.services.oauthApps.create(
      t.id,
      { name: 'api2 client', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const tokenWith = (clientId: string, clientSecret: string) =>
      cloud.app.inject({
        method: 'POST',
        url: `${OAUTH}/token`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
        }).toString(),
      })
    const expectInvalidClient = (res: LightMyRequestResponse, label: string) => {
      expect(res.statusCode, `${label}: ${res.body}`).toBe(401)
      expect(res.json().error, label).toBe('invalid_client')
      expect(res.headers['www-authenticate'], label).toBe('Basic realm="hajri"')
    }
    expect((await tokenWith(app.clientId, app.clientSecret)).statusCode).toBe(200)
    const refused: Record<string, string> = {
      ...mangled(app.clientSecret, CLIENT_SECRET),
      'another app’s secret': t.client.clientSecret,
      'an API key': t.apiKey,
      empty: '',
    }
    for (const [label, secret] of Object.entries(refused))
      expectInvalidClient(await tokenWith(app.clientId, secret), label)

    const rotated = await cloud.services.oauthApps.rotateSecret(t.id, app.id, TEST_ACTOR, 60)
    expect((await tokenWith(app.clientId, app.clientSecret)).statusCode).toBe(200)
    later(60)
    expectInvalidClient(await tokenWith(app.clientId, app.clientSecret), 'rotated out, past its grace')
    cloud.fixedNow = undefined
    expect((await tokenWith(app.clientId, rotated.clientSecret)).statusCode).toBe(200)
    await cloud.services.oauthApps.revoke(t.id, app.id, TEST_ACTOR)
    expectInvalidClient(await tokenWith(app.clientId, rotated.clientSecret), 'of a revoked app')
  })

  it('answers a wrong console password with 401 and the cookie challenge', async () => {
    const res = await signInRequest(cloud, t.owner.email, `${t.owner.password}x`)
    expectRefused(res, 'wrong password', 'invalid_credentials', /^Cookie realm="hajri"/)
  })
})

describeEachDatabase('OWASP API2: secrets are compared in constant time', (cloud) => {
  let t: TenantFixture
  const timingSafeEqual = vi.mocked(crypto.timingSafeEqual)
  const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest('hex')

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
  }, 60_000)
  afterEach(() => {
    vi.restoreAllMocks()
    timingSafeEqual.mockClear()
  })

  it('checks OAuth client secrets, CSRF tokens and passwords with crypto.timingSafeEqual', async () => {
    const checks: [string, () => Promise<LightMyRequestResponse>, number][] = [
      [
        'client secret',
        () =>
          cloud.app.inject({
            method: 'POST',
            url: `${OAUTH}/token`,
            payload: {
              grant_type: 'client_credentials',
              client_id: t.client.clientId,
              client_secret: `${t.client.clientSecret}`,
            },
          }),
        200,
      ],
      [
        'CSRF token',
        () =>
          t.session.call('POST', '/webhooks', {
            body: { url: 'https://hooks.example.com/x' },
            csrf: 'x'.repeat(t.session.csrfToken.length),
          }),
        403,
      ],
      ['password', () => signInRequest(cloud, t.owner.email, 'not the password at all'), 401],
    ]
    for (const [label, request, status] of checks) {
      timingSafeEqual.mockClear()
      const res = await request()
      expect(res.statusCode, `${label}: ${res.body}`).toBe(status)
      expect(timingSafeEqual, label).toHaveBeenCalled()
    }
  })

  it('looks API keys, access tokens, admin tokens and sessions up by their SHA-256, never by the secret', async () => {
    type Lookup = { findByHashForAuthentication(hash: string): Promise<unknown> }
    const stores = [ApiKeyStore, TokenStore, AdminTokenStore, ConsoleSessionStore] as const
    const spies = stores.map((store) => vi.spyOn(store.prototype as Lookup, 'findByHashForAuthentication'))
    const clientLookup = vi.spyOn(OAuthAppStore.prototype, 'findClientForAuthentication')
    // A key and a token never presented before: no earlier lookup of them can be cached
    // (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md).
    const apiKey = (await cloud.services.apiKeys.create(t.id, { scopes: ['employees:read'] }, TEST_ACTOR)).key
    const token = await cloud.app.inject({
      method: 'POST',
      url: `${OAUTH}/token`,
      payload: {
        grant_type: 'client_credentials',
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
      },
    })
    expect(token.statusCode).toBe(200)
    const oauthToken = token.json().access_token as string
    expect(
      (await cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(apiKey) })).statusCode,
    ).toBe(200)
    expect(
      (await cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(oauthToken) })).statusCode,
    ).toBe(200)
    expect(
      (await cloud.app.inject({ method: 'GET', url: WEBHOOKS, headers: bearer(t.adminToken) })).statusCode,
    ).toBe(200)
    expect((await t.session.call('GET', '/webhooks')).statusCode).toBe(200)
    const secrets = [apiKey, oauthToken, t.adminToken, t.session.cookie]
    for (const [i, spy] of spies.entries()) {
      expect(
        spy.mock.calls.map((args) => args[0]),
        stores[i]?.name,
      ).toContain(sha256(secrets[i] as string))
    }
    // Whatever reaches a store, a presented secret is never among it.
    const seen = JSON.stringify([...spies.flatMap((s) => s.mock.calls), ...clientLookup.mock.calls])
    for (const secret of [...secrets, t.client.clientSecret]) expect(seen).not.toContain(secret)
    expect(clientLookup).toHaveBeenCalled()
  })
})

describe('OWASP API2: no secret in the cloud is compared with == or ===', () => {
  const REPO = fileURLToPath(new URL('../../../', import.meta.url))
  // Every file that checks a presented secret (review: each uses a hash lookup or timingSafeEqual).
  const FILES = [
    'cloud/auth/secret-format.ts',
    'cloud/features/api-keys/service.ts',
    'cloud/features/oauth/app-service.ts',
    'cloud/features/oauth/token-service.ts',
    'cloud/features/oauth/client-authentication.ts',
    'cloud/features/admin-tokens/service.ts',
    'cloud/features/sessions/service.ts',
    'cloud/http/session-guard.ts',
    'cloud/features/users/password.ts',
    'cloud/plugins/bearer-token.ts',
  ]
  const SECRET_WORD = /secret|hash|csrf|password|token|digest/i
  // A comparison with a literal, undefined, null, a length or a type is not a comparison of secrets.
  const HARMLESS = /^(undefined|null|''|""|'[^']*'|"[^"]*"|\d+|.*\.length|typeof .*)$/

  it('finds only comparisons with literals, lengths and types next to a secret', () => {
    const offending: string[] = []
    for (const file of FILES) {
      const lines = readFileSync(join(REPO, file), 'utf8').split('\n')
      for (const [n, raw] of lines.entries()) {
        const line = raw.replace(/\/\/.*$/, '')
        for (const m of line.matchAll(/([\w.$[\]'"()?]+)\s*(?:===|!==|==|!=)\s*([\w.$[\]'"()?-]+)/g)) {
          const [left, right] = [m[1] as string, (m[2] as string).replace(/\)+$/, '')]
          if (HARMLESS.test(left) || HARMLESS.test(right)) continue
          if (SECRET_WORD.test(left) || SECRET_WORD.test(right))
            offending.push(`${file}:${n + 1}: ${raw.trim()}`)
        }
      }
    }
    expect(offending).toEqual([])
  })
})

describeEachDatabase('OWASP API2: guessing at the token endpoint and the sign-in runs into 429', (cloud) => {
  const apps: FastifyInstance[] = []
  afterAll(async () => {
    for (const app of apps) await app.close()
  })

  async function appWith(options: { perIp?: number; perClient?: number; signInsPerIp?: number }) {
    const app = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        oauthRateLimitPerIp: options.perIp ?? 1000,
        oauthRateLimitPerClient: options.perClient ?? 1000,
      },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
      ...(options.signInsPerIp ? { signInsPerIpPerMinute: options.signInsPerIp } : {}),
    })
    apps.push(app)
    await app.ready()
    return app
  }

  const guess = (app: FastifyInstance, clientId: string, secret: string, remoteAddress: string) =>
    app.inject({
      method: 'POST',
      url: `${OAUTH}/token`,
      remoteAddress,
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    })

  it('refuses an address after 3 failed guesses at a client id, before its secret is looked at', async () => {
    const app = await appWith({ perClient: 3 })
    const tenantId = await cloud.createTenant()
    const target = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'target', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const guesser = someAddress()
    for (let i = 0; i < 3; i++)
      expect((await guess(app, target.clientId, `hjs_guess${i}`, guesser)).statusCode).toBe(401)
    for (const secret of ['hjs_guess', target.clientSecret]) {
      const res = await guess(app, target.clientId, secret, guesser)
      expect(res.statusCode, res.body).toBe(429)
      expect(res.json().error).toBe('temporarily_unavailable')
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
    }
    // The client itself, elsewhere, is not refused for the guesser's failures (see review-oauth).
    expect((await guess(app, target.clientId, target.clientSecret, someAddress())).statusCode).toBe(200)
  })

  it('refuses an address after 5 attempts, whichever client ids it tries', async () => {
    const app = await appWith({ perIp: 5 })
    const address = someAddress()
    for (let i = 0; i < 5; i++)
      expect((await guess(app, `guessed-client-${i}`, 'hjs_x', address)).statusCode).toBe(401)
    const res = await guess(app, 'guessed-client-5', 'hjs_x', address)
    expect(res.statusCode).toBe(429)
    expect(res.headers['ratelimit-limit']).toBe('5')
    expect(res.headers['ratelimit-remaining']).toBe('0')
  })

  it('holds a console email back from an address after 4 wrong passwords, even against the right one', async () => {
    const t = await createTenantFixture(cloud)
    const guesser = someAddress()
    // The first wait is 1 s: with the clock held, a slow machine cannot outlast it between two requests.
    cloud.fixedNow = cloud.now()
    onTestFinished(() => {
      cloud.fixedNow = undefined
    })
    for (let i = 0; i < 4; i++) {
      const res = await signInRequest(cloud, t.owner.email, `wrong password ${i}`, { remoteAddress: guesser })
      expect(res.statusCode, res.body).toBe(401)
    }
    const held = await signInRequest(cloud, t.owner.email, t.owner.password, { remoteAddress: guesser })
    expect(held.statusCode, held.body).toBe(429)
    expect(codeOf(held)).toBe('login_locked')
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(0)
    // Guesses at the current password through a stolen session are held back the same way.
    const other = await freshSession(cloud, t)
    for (let i = 0; i < 4; i++) {
      const res = await other.browser.call('POST', '/session/password', {
        body: { currentPassword: `wrong current ${i}`, newPassword: 'a new password of enough length' },
      })
      expect(res.statusCode, res.body).toBe(403)
    }
    const heldToo = await other.browser.call('POST', '/session/password', {
      body: { currentPassword: other.user.password, newPassword: 'a new password of enough length' },
    })
    expect(codeOf(heldToo)).toBe('login_locked')
  })

  it('limits sign-in requests from one address, right or wrong', async () => {
    const app = await appWith({ signInsPerIp: 3 })
    const t = await createTenantFixture(cloud)
    const address = someAddress()
    const attempt = (password: string) =>
      app.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        remoteAddress: address,
        payload: { email: t.owner.email, password },
      })
    expect((await attempt('wrong one')).statusCode).toBe(401)
    expect((await attempt(t.owner.password)).statusCode).toBe(200)
    expect((await attempt('wrong two')).statusCode).toBe(401)
    const res = await attempt(t.owner.password)
    expect(res.statusCode, res.body).toBe(429)
    expect(codeOf(res)).toBe('rate_limited')
    expect(res.headers['ratelimit-limit']).toBe('3')
  })
})
