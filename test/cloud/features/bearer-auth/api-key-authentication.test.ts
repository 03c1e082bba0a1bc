import { readFile } from 'node:fs/promises'
import type { LightMyRequestResponse } from 'fastify'
import Fastify from 'fastify'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { generateApiKey, hashApiKey } from '../../../../cloud/features/api-keys/api-key-format.js'
import authPlugin from '../../../../cloud/plugins/auth.js'
import type { RouteRecord } from '../../../../cloud/plugins/route-table.js'
import { SCOPES, type Scope } from '../../../../shared/scopes.js'
import { nowMicros } from '../../../../shared/time.js'
import { bearer, describeEachDatabase, employee, type TestCloud } from '../../../support/cloud-harness.js'
import { everyStoredValue } from '../../stored-values.js'

const EMPLOYEES = '/api/public/v1/employees'
const REALM = 'Bearer realm="hajri"'

function expectProblem(res: LightMyRequestResponse, status: number, code: string): void {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(res.json()).toMatchObject({ status, code, type: `urn:hajri:problem:${code}` })
}

/** A concrete URL for a route pattern: path parameters filled with a plausible value. */
function concreteUrl(route: RouteRecord): string {
  return route.url.replace(/:(\w+)/g, (_, name: string) => (name === 'punchId' ? 'pun_unknown' : 'E001'))
}

function request(cloud: TestCloud, route: RouteRecord, headers: Record<string, string>) {
  const withBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH'
  return cloud.app.inject({
    method: route.method as 'GET',
    url: concreteUrl(route),
    headers,
    ...(withBody ? { payload: {} } : {}),
  })
}

describeEachDatabase('API key authentication', (cloud) => {
  let tenantId: string
  let fullKey: string
  let publicRoutes: RouteRecord[]

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    fullKey = await cloud.createApiKey(tenantId, [...SCOPES])
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    publicRoutes = cloud.app.routeTable.filter((r) => r.scope !== undefined)
  })

  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const getEmployees = (headers: Record<string, string> = {}) =>
    cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers })

  it('lets a valid key in', async () => {
    const res = await getEmployees(bearer(fullKey))
    expect(res.statusCode).toBe(200)
    expect(res.json().data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['E001'])
  })

  it('reads the Bearer scheme case-insensitively (RFC 7235 §2.1)', async () => {
    expect((await getEmployees({ authorization: `bearer ${fullKey}` })).statusCode).toBe(200)
    expect((await getEmployees({ authorization: `BEARER ${fullKey}` })).statusCode).toBe(200)
  })

  describe('without a credential', () => {
    it('answers 401 authentication_required with a Bearer challenge', async () => {
      const res = await getEmployees()
      expectProblem(res, 401, 'authentication_required')
      expect(res.headers['www-authenticate']).toBe(REALM)
    })

    it('treats an empty Authorization header as none', async () => {
      const res = await getEmployees({ authorization: '' })
      expectProblem(res, 401, 'authentication_required')
      expect(res.headers['www-authenticate']).toBe(REALM)
    })
  })

  describe('with a malformed Authorization header', () => {
    for (const [label, header] of [
      ['Basic credentials', 'Basic dXNlcjpwYXNz'],
      ['Bearer with no token', 'Bearer'],
      ['Bearer with only spaces', 'Bearer    '],
      ['the key without a scheme', 'KEY'],
      ['two tokens', 'Bearer KEY KEY'],
      ['a token with characters outside token68', 'Bearer KEY;DROP'],
      ['Bearer with no space', 'BearerKEY'],
    ] as const) {
      it(`answers 401 invalid_credential for ${label}`, async () => {
        const res = await getEmployees({ authorization: header.replaceAll('KEY', fullKey) })
        expectProblem(res, 401, 'invalid_credential')
        expect(res.headers['www-authenticate']).toBe(`${REALM}, error="invalid_request"`)
      })
    }
  })

  describe('with a key that is not a live key of this service', () => {
    const expectInvalidToken = (res: LightMyRequestResponse) => {
      expectProblem(res, 401, 'invalid_credential')
      expect(res.headers['www-authenticate']).toBe(`${REALM}, error="invalid_token"`)
    }

    it('refuses a well-formed key that was never issued', async () => {
      expectInvalidToken(await getEmployees(bearer(generateApiKey())))
    })

    it('refuses a key with a wrong checksum', async () => {
      const last = fullKey.at(-1) === 'A' ? 'B' : 'A'
      expectInvalidToken(await getEmployees(bearer(fullKey.slice(0, -1) + last)))
    })

    it('refuses tokens that are not API keys at all', async () => {
      expectInvalidToken(await getEmployees(bearer('abc')))
      expectInvalidToken(await getEmployees(bearer(fullKey.slice(0, -1))))
      expectInvalidToken(await getEmployees(bearer(`${fullKey}=`)))
    })

    it('refuses a key from its expiry on, and accepts it until then', async () => {
      const created = nowMicros()
      cloud.fixedNow = created
      const key = await cloud.createApiKey(tenantId, ['employees:read'], { expiresInSeconds: 60 })
      cloud.fixedNow = created + 59_000_000
      expect((await getEmployees(bearer(key))).statusCode).toBe(200)
      cloud.fixedNow = created + 60_000_000
      expectInvalidToken(await getEmployees(bearer(key)))
      cloud.fixedNow = created + 3_600_000_000
      expectInvalidToken(await getEmployees(bearer(key)))
    })

    it('refuses a revoked key', async () => {
      const key = await cloud.createApiKey(tenantId, ['employees:read'])
      expect((await getEmployees(bearer(key))).statusCode).toBe(200)
      await cloud.database.db
        .updateTable('api_keys')
        .set({ revoked_at: nowMicros() })
        .where('key_hash', '=', hashApiKey(key))
        .execute()
      expectInvalidToken(await getEmployees(bearer(key)))
    })
  })

  describe('scopes', () => {
    it('answers 403 insufficient_scope naming the missing scope', async () => {
      const key = await cloud.createApiKey(tenantId, ['attendance:read', 'attendance:write'])
      const res = await getEmployees(bearer(key))
      expectProblem(res, 403, 'insufficient_scope')
      expect(res.headers['www-authenticate']).toBe(
        `${REALM}, error="insufficient_scope", scope="employees:read"`,
      )
      expect(res.json().detail).toContain('employees:read')
    })

    it('covers the public API: there are public routes, and each needs a known scope', async () => {
      expect(publicRoutes.length).toBeGreaterThanOrEqual(6)
      for (const route of publicRoutes) {
        expect(route.url.startsWith('/api/public/v1/'), route.url).toBe(true)
        expect(SCOPES as readonly string[]).toContain(route.scope)
      }
      // Every route under the public prefix is a public route with a scope, but for the one declared
      // open: the webhook event catalog, which holds nothing of any tenant's.
      const open = cloud.app.routeTable.filter(
        (r) => r.url.startsWith('/api/public/') && r.scope === undefined,
      )
      expect(open.map((r) => `${r.method} ${r.url}`)).toEqual([
        'GET /api/public/v1/webhook-event-types',
        'HEAD /api/public/v1/webhook-event-types',
      ])
      for (const route of open) expect(route.anonymous, route.url).toBe(true)
      const catalog = await cloud.app.inject({ method: 'GET', url: '/api/public/v1/webhook-event-types' })
      expect(catalog.statusCode).toBe(200)
    })

    it('every public route refuses a request without a credential', async () => {
      for (const route of publicRoutes) {
        const res = await request(cloud, route, {})
        expect(res.statusCode, `${route.method} ${route.url}`).toBe(401)
        expect(res.headers['www-authenticate']).toBe(REALM)
      }
    })

    it('every public route refuses a key holding every scope but its own', async () => {
      const keysLacking = new Map<Scope, string>()
      for (const scope of SCOPES) {
        keysLacking.set(
          scope,
          await cloud.createApiKey(
            tenantId,
            SCOPES.filter((s) => s !== scope),
          ),
        )
      }
      for (const route of publicRoutes) {
        const scope = route.scope as Scope
        const res = await request(cloud, route, bearer(keysLacking.get(scope) as string))
        const label = `${route.method} ${route.url}`
        expect(res.statusCode, label).toBe(403)
        expect(res.headers['www-authenticate'], label).toBe(
          `${REALM}, error="insufficient_scope", scope="${scope}"`,
        )
        if (route.method !== 'HEAD') expect(res.json().code, label).toBe('insufficient_scope')
      }
    })

    it('every public route lets in a key holding only its own scope', async () => {
      const keysWith = new Map<Scope, string>()
      for (const scope of SCOPES) keysWith.set(scope, await cloud.createApiKey(tenantId, [scope]))
      for (const route of publicRoutes) {
        const res = await request(cloud, route, bearer(keysWith.get(route.scope as Scope) as string))
        // Past authentication the route answers for itself (200, 201, 400 for the empty body, 404
        // for the unknown punch), but never with an authentication or scope failure.
        expect([401, 403], `${route.method} ${route.url}: ${res.body}`).not.toContain(res.statusCode)
      }
    })
  })

  describe('storage of keys', () => {
    it('keeps only the SHA-256 of a key, never the key', async () => {
      const key = await cloud.createApiKey(tenantId, ['employees:read'])
      const row = await cloud.database.db
        .selectFrom('api_keys')
        .selectAll()
        .where('key_hash', '=', hashApiKey(key))
        .executeTakeFirstOrThrow()
      expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/)
      expect(row.tenant_id).toBe(tenantId)
      expect(key.startsWith(row.key_prefix)).toBe(true)
      expect(row.key_prefix.length).toBeLessThanOrEqual(10)

      const stored = await everyStoredValue(cloud.database.db)
      // The scan sees the stored rows (else it could never fail) but not the key or its secret part.
      expect(stored).toContain(row.key_hash)
      expect(stored).not.toContain(key)
      expect(stored).not.toContain(key.slice(row.key_prefix.length))
    })

    // The files exist only on SQLite; on PostgreSQL the table scan above is the whole check.
    if (cloud.kind === 'sqlite')
      it('leaves no copy of the key in the SQLite files either', async () => {
        const key = await cloud.createApiKey(tenantId, ['employees:read'])
        const path = cloud.database.describe.slice('sqlite:'.length)
        const files = await Promise.all(
          [path, `${path}-wal`].map((p) => readFile(p).catch(() => Buffer.alloc(0))),
        )
        const bytes = Buffer.concat(files)
        expect(bytes.includes(hashApiKey(key))).toBe(true)
        expect(bytes.includes(key)).toBe(false)
        expect(bytes.includes(key.slice(10))).toBe(false)
      })
  })
})

describe('auth plugin', () => {
  it('refuses at startup a route that declares no scope, so none is left open by mistake', async () => {
    const app = Fastify({ logger: false })
    const loading = app
      .register(async (api) => {
        await api.register(authPlugin, { authenticator: { authenticate: async () => undefined } })
        api.get('/open', async () => ({ open: true }))
      })
      .ready()
    await expect(loading).rejects.toThrow('route GET /open declares no scope')
  })
})
