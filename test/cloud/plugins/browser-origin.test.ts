import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { SCOPES } from '../../../shared/scopes.js'
import { bearer, describeEachDatabase, employee, TEST_ACTOR } from '../../support/cloud-harness.js'

const ORIGINS = ['https://hr.example.com', 'null', 'http://localhost:3000']
const OAUTH_ENDPOINTS = ['/api/oauth/token', '/api/oauth/revoke', '/api/oauth/introspect']

/** A concrete URL for a route pattern: path parameters filled with values that exist. */
function concreteUrl(route: RouteRecord): string {
  return route.url.replace(/:(\w+)/g, (_, name: string) => (name === 'punchId' ? 'pun_unknown' : 'E001'))
}

/** A body the route would accept, so that only the Origin header can explain a refusal. */
function validBody(route: RouteRecord): object | undefined {
  if (route.method !== 'POST' && route.method !== 'PUT' && route.method !== 'PATCH') return undefined
  const punch = {
    employeeCode: 'E001',
    punchType: 'IN',
    punchedAt: new Date(Date.now() - 3_600_000).toISOString(),
    deviceId: 'gate-1',
    externalId: `origin-${Math.random().toString(36).slice(2)}`,
  }
  return route.url.endsWith('/batch') ? { punches: [punch] } : punch
}

function expectNoCors(res: LightMyRequestResponse, what: string): void {
  const cors = Object.keys(res.headers).filter((h) => h.toLowerCase().startsWith('access-control-'))
  expect(cors, `${what} sent CORS headers`).toEqual([])
}

function expectBrowserOriginForbidden(res: LightMyRequestResponse, what: string): void {
  expect(res.statusCode, `${what}: ${res.body}`).toBe(403)
  expect(res.headers['content-type'], what).toMatch(/^application\/problem\+json/)
  // A HEAD answer has the GET's headers and no body.
  if (what.startsWith('HEAD ')) expect(res.body, what).toBe('')
  else
    expect(res.json(), what).toMatchObject({
      type: 'urn:hajri:problem:browser_origin_forbidden',
      status: 403,
      code: 'browser_origin_forbidden',
    })
  expect(res.headers['x-request-id'], what).toBeDefined()
  expectNoCors(res, what)
}

describeEachDatabase('browser origins (keys must not be used in browser code)', (cloud) => {
  let publicRoutes: RouteRecord[]
  let key: string
  let clientId: string
  let clientSecret: string
  let appId: string
  let accessToken: string

  beforeAll(async () => {
    const tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    key = await cloud.createApiKey(tenantId, [...SCOPES])
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'origin test', scopes: [...SCOPES] },
      TEST_ACTOR,
    )
    clientId = app.clientId
    clientSecret = app.clientSecret
    appId = app.id
    accessToken = await issueToken()
    publicRoutes = cloud.app.routeTable.filter((r) => r.scope !== undefined)
  })

  async function issueToken(): Promise<string> {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().access_token
  }

  const tokensOfApp = async () =>
    (await cloud.database.db.selectFrom('oauth_tokens').select('id').where('app_id', '=', appId).execute())
      .length

  const callRoute = (route: RouteRecord, headers: Record<string, string>) => {
    const body = validBody(route)
    return cloud.app.inject({
      method: route.method as 'GET',
      url: concreteUrl(route),
      headers,
      ...(body ? { payload: body } : {}),
    })
  }

  it('covers the public API: every route under /api/public/ has a scope', () => {
    expect(publicRoutes.length).toBeGreaterThanOrEqual(6)
    for (const route of cloud.app.routeTable) {
      if (route.url.startsWith('/api/public/') && !route.anonymous)
        expect(route.scope, route.url).toBeDefined()
    }
  })

  it('every public route answers a valid credential without Origin (so a 403 below is the Origin)', async () => {
    for (const route of publicRoutes) {
      const res = await callRoute(route, bearer(key))
      expect(res.statusCode, `${route.method} ${route.url}: ${res.body}`).toBeLessThan(500)
      expect([401, 403], `${route.method} ${route.url}: ${res.body}`).not.toContain(res.statusCode)
    }
  })

  it('every public route answers 403 browser_origin_forbidden to a request with Origin, API key or token', async () => {
    for (const route of publicRoutes) {
      for (const credential of [key, accessToken]) {
        for (const origin of ORIGINS) {
          const res = await callRoute(route, { ...bearer(credential), origin })
          expectBrowserOriginForbidden(res, `${route.method} ${route.url} from ${origin}`)
        }
      }
    }
  })

  it('refuses the Origin before anything else: without a credential, or with an empty Origin', async () => {
    for (const route of publicRoutes) {
      expectBrowserOriginForbidden(
        await callRoute(route, { origin: ORIGINS[0] as string }),
        `${route.method} ${route.url} without a credential`,
      )
      expectBrowserOriginForbidden(
        await callRoute(route, { ...bearer(key), origin: '' }),
        `${route.method} ${route.url} with an empty Origin`,
      )
    }
  })

  it('a refused browser request does not spend the rate limit of the key', async () => {
    const tenantId = await cloud.createTenant()
    const limited = await cloud.createApiKey(tenantId, ['employees:read'], { rateLimitPerMinute: 2 })
    for (let i = 0; i < 5; i++) {
      const res = await cloud.app.inject({
        method: 'GET',
        url: '/api/public/v1/employees',
        headers: { ...bearer(limited), origin: 'https://hr.example.com' },
      })
      expectBrowserOriginForbidden(res, 'GET employees from a browser')
    }
    const res = await cloud.app.inject({
      method: 'GET',
      url: '/api/public/v1/employees',
      headers: bearer(limited),
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['ratelimit-remaining']).toBe('1')
  })

  it('the OAuth endpoints refuse a request with Origin with a 403, even with valid client credentials', async () => {
    // Revocation and introspection act on a token of their own, not the one other tests use.
    const spare = await issueToken()
    const tokensBefore = await tokensOfApp()
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`
    for (const url of OAUTH_ENDPOINTS) {
      const form = new URLSearchParams(
        url.endsWith('/token') ? { grant_type: 'client_credentials' } : { token: spare },
      ).toString()
      // The same request without Origin succeeds.
      const allowed = await cloud.app.inject({
        method: 'POST',
        url,
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        payload: form,
      })
      expect(allowed.statusCode, `${url}: ${allowed.body}`).toBe(200)
      for (const origin of ORIGINS) {
        const res = await cloud.app.inject({
          method: 'POST',
          url,
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', origin },
          payload: form,
        })
        const what = `POST ${url} from ${origin}`
        expect(res.statusCode, `${what}: ${res.body}`).toBe(403)
        // RFC 6749 §5.2 shape on the OAuth endpoints, as their other errors.
        expect(res.headers['content-type'], what).toMatch(/^application\/json/)
        expect(res.headers['cache-control'], what).toBe('no-store')
        expect(res.json(), what).toMatchObject({ error: 'invalid_request', status: 403 })
        expect(res.json().error_description, what).toMatch(/browser/)
        expect(res.json(), what).not.toHaveProperty('access_token')
        expectNoCors(res, what)
      }
    }
    // The refused token requests issued nothing: only the allowed one added a token.
    expect(await tokensOfApp()).toBe(tokensBefore + 1)
  })

  it('no route sends CORS headers, to a plain request or to an OPTIONS preflight', async () => {
    const routes = [
      ...cloud.app.routeTable.filter((r) => r.method !== 'HEAD'),
      ...OAUTH_ENDPOINTS.map((url) => ({
        method: 'POST',
        url,
        scope: undefined,
        access: undefined,
        anonymous: false,
      })),
    ]
    for (const route of routes) {
      const url = concreteUrl(route)
      for (const origin of ORIGINS) {
        const plain = await callRoute(route, { ...bearer(key), origin })
        expectNoCors(plain, `${route.method} ${url} from ${origin}`)
        const preflight = await cloud.app.inject({
          method: 'OPTIONS',
          url,
          headers: {
            origin,
            'access-control-request-method': route.method,
            'access-control-request-headers': 'authorization, content-type',
          },
        })
        const what = `OPTIONS ${url} from ${origin}`
        expectNoCors(preflight, what)
        // A preflight that is not allowed stops the browser; a 2xx without CORS headers would too,
        // but nothing here should claim success.
        expect(preflight.statusCode, `${what}: ${preflight.body}`).toBeGreaterThanOrEqual(400)
      }
    }
  })
})
