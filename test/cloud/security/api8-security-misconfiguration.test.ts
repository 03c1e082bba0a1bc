/**
 * OWASP API8:2023 Security Misconfiguration: security headers; no CORS on the public API;
 * no stack traces; TLS guidance in deploy/. Every answer of every route, errors and the router's
 * own included, carries nosniff, a Referrer-Policy, no framing and no caching (cloud/plugins/
 * security-headers.ts), and HSTS when it went out over https; no answer, to a preflight or a
 * cross-origin request, carries a CORS header; no 5xx, on any route, says anything internal.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { API_CSP, DOCS_CSP, HSTS } from '../../../cloud/plugins/security-headers.js'
import { bearer, TestCloud } from '../../support/cloud-harness.js'
import { uniqueEmail } from '../features/sessions/session-kit.js'
import {
  CONSOLE,
  callersOf,
  createTenantFixture,
  familyOf,
  OAUTH,
  ownRequest,
  type Planned,
  PUBLIC,
  routeKey,
  send,
  type TenantFixture,
} from './security-kit.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))

/** Answers a client may keep: the same for everyone, and no secret in them. */
const CACHEABLE: Record<string, RegExp> = {
  [`GET ${PUBLIC}/webhook-event-types`]: /^public, max-age=\d+$/,
  'GET /.well-known/oauth-authorization-server': /^(public, max-age=\d+|no-cache)$/,
}

function expectSecurityHeaders(res: LightMyRequestResponse, url: string, label: string) {
  const h = res.headers
  expect(h['x-content-type-options'], label).toBe('nosniff')
  expect(h['referrer-policy'], label).toBe('no-referrer')
  expect(h['x-frame-options'], label).toBe('DENY')
  expect(String(h['content-security-policy']), label).toContain("frame-ancestors 'none'")
  const path = url.split('?')[0] as string
  if (
    path.startsWith('/api/') ||
    path.startsWith('/.well-known/') ||
    ['/healthz', '/readyz', '/openapi.json'].includes(path)
  )
    expect(h['content-security-policy'], label).toBe(API_CSP)
  if (path === '/docs' || path === '/docs/') expect(h['content-security-policy'], label).toBe(DOCS_CSP)
  expect(h['strict-transport-security'], `${label}: HSTS over plain http`).toBeUndefined()
  expect(h['x-request-id'], label).toEqual(expect.any(String))
}

const corsHeaders = (res: LightMyRequestResponse) =>
  Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))

describe('OWASP API8: security headers, CORS and errors', () => {
  const cloud = new TestCloud('sqlite')
  let t: TenantFixture

  beforeAll(async () => {
    await cloud.start()
    t = await createTenantFixture(cloud)
  }, 60_000)
  afterAll(() => cloud.stop())

  it('sends the security headers, and no-store on every API answer, on every route', async () => {
    let answers = 0
    for (const route of cloud.app.routeTable) {
      for (const caller of callersOf(familyOf(route), t)) {
        const planned = await ownRequest(cloud, route, t, caller)
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} by ${caller.kind} (${res.statusCode})`
        expectSecurityHeaders(res, String(planned.options.url), label)
        const cacheable = CACHEABLE[routeKey(route).replace(/^HEAD /, 'GET ')]
        if (cacheable) expect(res.headers['cache-control'], label).toMatch(cacheable)
        else if (route.url.startsWith('/api/')) expect(res.headers['cache-control'], label).toBe('no-store')
        answers++
      }
    }
    expect(answers).toBeGreaterThan(70)
  }, 120_000)

  it('sends them on errors too: refused, not found, invalid, too large, and the router’s own', async () => {
    const inject = (options: InjectOptions) => cloud.app.inject(options)
    const errors: [string, string, Promise<LightMyRequestResponse>][] = [
      ['401 public', `${PUBLIC}/employees`, inject({ method: 'GET', url: `${PUBLIC}/employees` })],
      ['401 console', `${CONSOLE}/webhooks`, inject({ method: 'GET', url: `${CONSOLE}/webhooks` })],
      [
        '401 OAuth',
        `${OAUTH}/token`,
        inject({ method: 'POST', url: `${OAUTH}/token`, payload: { grant_type: 'client_credentials' } }),
      ],
      ['404', '/nowhere', inject({ method: 'GET', url: '/nowhere' })],
      [
        '400',
        `${PUBLIC}/employees?limit=0`,
        inject({ method: 'GET', url: `${PUBLIC}/employees?limit=0`, headers: bearer(t.apiKey) }),
      ],
      [
        '415',
        `${PUBLIC}/attendance/punches`,
        inject({
          method: 'POST',
          url: `${PUBLIC}/attendance/punches`,
          headers: { ...bearer(t.apiKey), 'content-type': 'text/plain' },
          payload: 'x',
        }),
      ],
      [
        '400 bad URL',
        `${PUBLIC}/employees/%E0%A4%A`,
        inject({ method: 'GET', url: `${PUBLIC}/employees/%E0%A4%A` }),
      ],
      [
        '414',
        `${PUBLIC}/employees/${'E'.repeat(300)}`,
        inject({ method: 'GET', url: `${PUBLIC}/employees/${'E'.repeat(300)}`, headers: bearer(t.apiKey) }),
      ],
      [
        '403 origin',
        `${PUBLIC}/employees`,
        inject({
          method: 'GET',
          url: `${PUBLIC}/employees`,
          headers: { ...bearer(t.apiKey), origin: 'https://evil.example' },
        }),
      ],
    ]
    for (const [label, url, pending] of errors) {
      const res = await pending
      expect(res.statusCode, label).toBeGreaterThanOrEqual(400)
      expectSecurityHeaders(res, url, label)
      expect(res.headers['cache-control'], label).toBe('no-store')
    }
  })

  it('sends no CORS header to a preflight or a cross-origin request, on any route', async () => {
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      const planned: Planned = await ownRequest(cloud, route, t, callersOf(family, t)[0])
      const url = String(planned.options.url)
      const preflight = await cloud.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://evil.example',
          'access-control-request-method': route.method,
          'access-control-request-headers': 'authorization, content-type',
        },
      })
      expect(corsHeaders(preflight), `OPTIONS ${url}`).toEqual([])
      expect(preflight.statusCode, `OPTIONS ${url}`).toBeGreaterThanOrEqual(400)
      planned.options.headers = { ...(planned.options.headers as object), origin: 'https://evil.example' }
      const res = await send(cloud, planned)
      const label = `${routeKey(route)} from another origin`
      expect(corsHeaders(res), label).toEqual([])
      // Credentials for servers are refused from a page (docs/decisions/0006-no-api-keys-in-browsers.md); the
      // console's session, by CSRF.
      if (
        family === 'public' ||
        family === 'oauth' ||
        (family === 'console' && !('cookies' in planned.options))
      )
        expect(res.statusCode, label).toBe(403)
      if (family === 'session' || ('cookies' in planned.options && family === 'console'))
        expect(res.statusCode, `${label}: ${res.body}`).toBe(403)
    }
  }, 120_000)
})

describe('OWASP API8: https and the proxy in front', () => {
  const cloud = new TestCloud('sqlite')
  const apps: FastifyInstance[] = []
  beforeAll(() => cloud.start())
  afterAll(async () => {
    for (const app of apps) await app.close()
    await cloud.stop()
  })

  async function appWith(
    config: { trustProxy: boolean | number; publicUrl?: string },
    signInsPerIpPerMinute?: number,
  ) {
    const app = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, logLevel: 'silent', ...config },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
      ...(signInsPerIpPerMinute ? { signInsPerIpPerMinute } : {}),
    })
    apps.push(app)
    await app.ready()
    return app
  }

  it('goes out over https: through a trusted proxy, or at an https HAJRI_PUBLIC_URL; never over plain http', async () => {
    const proxied = await appWith({ trustProxy: 1 })
    const https = { 'x-forwarded-proto': 'https' }
    for (const url of ['/healthz', `${PUBLIC}/employees`, '/nowhere', '/console']) {
      expect(
        (await proxied.inject({ method: 'GET', url, headers: https })).headers['strict-transport-security'],
        url,
      ).toBe(HSTS)
      expect(
        (await proxied.inject({ method: 'GET', url })).headers['strict-transport-security'],
        url,
      ).toBeUndefined()
    }
    // A proxy not trusted cannot claim https for the client.
    const direct = await appWith({ trustProxy: false })
    expect(
      (await direct.inject({ method: 'GET', url: '/healthz', headers: https })).headers[
        'strict-transport-security'
      ],
    ).toBeUndefined()
    const fixed = await appWith({ trustProxy: false, publicUrl: 'https://hajri.example.com' })
    expect(
      (await fixed.inject({ method: 'GET', url: '/healthz' })).headers['strict-transport-security'],
    ).toBe(HSTS)
  })

  // Regression: Fastify 5.12 trusts nothing for a hop count, so behind compose's Caddy
  // (HAJRI_TRUST_PROXY=1) every client had Caddy's address and shared one limit and one lockout.
  it('takes the client from X-Forwarded-For behind HAJRI_TRUST_PROXY=1: per-address limits are per client', async () => {
    const proxied = await appWith({ trustProxy: 1 }, 2)
    const signInFrom = (client: string) =>
      proxied.inject({
        method: 'POST',
        url: `${CONSOLE}/session`,
        remoteAddress: '10.9.0.2',
        headers: { 'x-forwarded-for': client },
        payload: { email: uniqueEmail('nobody'), password: 'not a password of anyone' },
      })
    const first = []
    for (let i = 0; i < 3; i++) first.push((await signInFrom('198.51.100.20')).statusCode)
    expect(first).toEqual([401, 401, 429])
    expect((await signInFrom('198.51.100.21')).statusCode).toBe(401)
    // The proxy's own hop is the one trusted: a header sent straight to the cloud is not believed.
    const direct = await appWith({ trustProxy: false }, 2)
    const spoofed = []
    for (const client of ['198.51.100.30', '198.51.100.31', '198.51.100.32'])
      spoofed.push(
        (
          await direct.inject({
            method: 'POST',
            url: `${CONSOLE}/session`,
            remoteAddress: '10.9.0.3',
            headers: { 'x-forwarded-for': client },
            payload: { email: uniqueEmail('nobody'), password: 'not a password of anyone' },
          })
        ).statusCode,
      )
    expect(spoofed).toEqual([401, 401, 429])
  })
})

describe('OWASP API8: no 5xx says anything internal', () => {
  const cloud = new TestCloud('sqlite')
  let t: TenantFixture
  let thrower: FastifyInstance
  const SECRET = 'connect ECONNREFUSED 10.1.2.3:5432 while running SELECT key_hash FROM api_keys'

  beforeAll(async () => {
    await cloud.start()
    t = await createTenantFixture(cloud)
    thrower = await buildApp({
      config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
    })
    thrower.get('/boom', async () => {
      throw new Error(SECRET)
    })
    thrower.post('/api/boom', async () => {
      throw Object.assign(new TypeError(SECRET), { code: 'ERR_SOMETHING', statusCode: 503 })
    })
    await thrower.ready()
  }, 60_000)
  afterAll(async () => {
    await thrower?.close()
    await cloud.stop()
  })

  const expectNothingInternal = (res: LightMyRequestResponse, label: string) => {
    expect(res.body, label).not.toMatch(
      /ECONNREFUSED|10\.1\.2\.3|key_hash|api_keys|select |sqlite|kysely|postgres|better-sqlite3/i,
    )
    expect(res.body, label).not.toMatch(/\bstack\b|\.ts:\d+|\.js:\d+|node_modules|\n\s+at |\bat [\w.<>]+ \(/)
  }

  it('answers a handler that throws with a bare 500 problem and security headers', async () => {
    for (const [method, url] of [
      ['GET', '/boom'],
      ['POST', '/api/boom'],
    ] as const) {
      const res = await thrower.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) })
      expect(res.statusCode, url).toBe(500)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.json().code).toBe('internal_error')
      expectNothingInternal(res, url)
      expectSecurityHeaders(res, url, url)
    }
  })

  it('says nothing of the database when it is gone, on any route', async () => {
    const planned: { label: string; planned: Planned }[] = []
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      if (family === 'docs' || family === 'static') continue
      for (const caller of callersOf(family, t))
        planned.push({
          label: `${routeKey(route)} by ${caller.kind}`,
          planned: await ownRequest(cloud, route, t, caller),
        })
    }
    await cloud.database.close()
    let failed = 0
    for (const { label, planned: p } of planned) {
      const res = await send(cloud, p)
      expectNothingInternal(res, `${label} (${res.statusCode})`)
      if (res.statusCode >= 500) {
        failed++
        expect(res.headers['content-type'], label).toMatch(/^application\/(problem\+)?json/)
      }
    }
    expect(failed).toBeGreaterThan(planned.length / 2)
  }, 120_000)
})

describe('OWASP API8: TLS guidance in deploy/', () => {
  it('has the proxy send HSTS and says how certificates are obtained, renewed or brought', () => {
    const caddyfile = readFileSync(join(REPO, 'deploy/Caddyfile'), 'utf8')
    expect(caddyfile).toMatch(/header Strict-Transport-Security "max-age=\d+"/)
    for (const topic of [
      /ACME/,
      /renew/i,
      /tls \/certs\//,
      /TLS 1\.2 and 1\.3/,
      /trusted_proxies/,
      /HAJRI_TRUST_PROXY/,
    ])
      expect(caddyfile).toMatch(topic)
    const production = readFileSync(join(REPO, 'docs/operators/production.md'), 'utf8')
    expect(production).toMatch(/^## TLS, the proxy and HAJRI_TRUST_PROXY$/m)
    const env = readFileSync(join(REPO, 'deploy/cloud.env.example'), 'utf8')
    expect(env).toMatch(/TLS-terminating reverse proxy/)
  })
})
