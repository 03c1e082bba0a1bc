import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { EmployeeListQuerySchema } from '../../../shared/employee.js'
import { PROBLEM_CONTENT_TYPE } from '../../../shared/problem.js'
import { PunchInputSchema } from '../../../shared/punch.js'
import { TestCloud } from '../../support/cloud-harness.js'

interface Operation {
  security?: Record<string, string[]>[]
  responses: Record<
    string,
    { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
  >
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> }
  parameters?: { in: string; name: string }[]
}

interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, Operation>>
  components: { securitySchemes: Record<string, { type: string; scheme: string }> }
}

/** `/employees/:employeeCode` as OpenAPI writes it: `/employees/{employeeCode}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}')

describe('OpenAPI document', () => {
  const cloud = new TestCloud('sqlite')
  let spec: OpenApiDocument
  let publicRoutes: RouteRecord[]

  beforeAll(async () => {
    await cloud.start()
    const res = await cloud.app.inject({ method: 'GET', url: '/openapi.json' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^application\/json/)
    spec = res.json()
    // HEAD mirrors GET and is not documented on its own.
    publicRoutes = cloud.app.routeTable.filter((r) => r.scope !== undefined && r.method !== 'HEAD')
  })
  afterAll(() => cloud.stop())

  const operation = (route: RouteRecord): Operation | undefined =>
    spec.paths[openApiPath(route.url)]?.[route.method.toLowerCase()]

  it('is OpenAPI 3.1.0 with the bearer scheme', () => {
    expect(spec.openapi).toBe('3.1.0')
    expect(spec.info.title).toEqual(expect.any(String))
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  it('documents every public route with its method', () => {
    expect(publicRoutes.length).toBeGreaterThanOrEqual(6)
    for (const route of publicRoutes) {
      expect(operation(route), `${route.method} ${route.url}`).toBeDefined()
    }
  })

  it('documents nothing under the public API that is not a route', () => {
    const open = cloud.app.routeTable.filter((r) => r.anonymous && r.method !== 'HEAD')
    const served = new Set(
      [...publicRoutes, ...open].map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`),
    )
    for (const [path, methods] of Object.entries(spec.paths)) {
      if (!path.startsWith('/api/public/')) continue
      for (const method of Object.keys(methods))
        expect(served, `${method} ${path}`).toContain(`${method} ${path}`)
    }
  })

  it('documents the open event catalog as needing no credential', () => {
    const open = cloud.app.routeTable.filter((r) => r.anonymous && r.method !== 'HEAD')
    expect(open.map((r) => r.url)).toEqual(['/api/public/v1/webhook-event-types'])
    for (const route of open) expect(operation(route)?.security).toEqual([])
  })

  it('documents every console API route, with the admin token or the session cookie, and its problems', () => {
    const consoleRoutes = cloud.app.routeTable.filter((r) => r.access !== undefined && r.method !== 'HEAD')
    expect(consoleRoutes.length).toBeGreaterThanOrEqual(13)
    expect(spec.components.securitySchemes.adminToken).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(spec.components.securitySchemes.consoleSession).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'hajri_session',
    })
    expect(spec.components.securitySchemes.csrfToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-CSRF-Token',
    })
    for (const route of consoleRoutes) {
      const label = `${route.method} ${route.url}`
      expect(route.url.startsWith('/api/console/v1/'), label).toBe(true)
      // A session changes something only with its CSRF token (docs/decisions/0046-console-csrf.md).
      const session = route.method === 'GET' ? { consoleSession: [] } : { consoleSession: [], csrfToken: [] }
      expect(operation(route)?.security, label).toEqual([{ adminToken: [] }, session])
      for (const status of ['400', '401', '403', '404', '429']) {
        expect(
          operation(route)?.responses[status]?.content?.[PROBLEM_CONTENT_TYPE],
          `${label} ${status}`,
        ).toBeDefined()
      }
    }
    // Nothing documented under the administration prefix that is not a route.
    const sessionRoutes = cloud.app.routeTable.filter((r) => r.url.startsWith('/api/console/v1/session'))
    const served = new Set(
      [...consoleRoutes, ...sessionRoutes].map((r) => `${r.method.toLowerCase()} ${openApiPath(r.url)}`),
    )
    for (const [path, methods] of Object.entries(spec.paths)) {
      if (!path.startsWith('/api/console/')) continue
      for (const method of Object.keys(methods))
        expect(served, `${method} ${path}`).toContain(`${method} ${path}`)
    }
  })

  it('documents the console session routes: sign-in open, the rest with the cookie (and the CSRF token to change)', () => {
    const op = (method: string, path: string) => spec.paths[path]?.[method]
    expect(op('post', '/api/console/v1/session')?.security).toEqual([])
    expect(op('get', '/api/console/v1/session')?.security).toEqual([{ consoleSession: [] }])
    expect(op('delete', '/api/console/v1/session')?.security).toEqual([{ consoleSession: [], csrfToken: [] }])
    expect(op('post', '/api/console/v1/session/password')?.security).toEqual([
      { consoleSession: [], csrfToken: [] },
    ])
    for (const [method, path] of [
      ['post', '/api/console/v1/session'],
      ['get', '/api/console/v1/session'],
      ['delete', '/api/console/v1/session'],
      ['post', '/api/console/v1/session/password'],
    ] as const) {
      for (const status of ['401', '403', '429'])
        expect(
          op(method, path)?.responses[status]?.content?.[PROBLEM_CONTENT_TYPE],
          `${method} ${path} ${status}`,
        ).toBeDefined()
    }
    const signIn = op('post', '/api/console/v1/session')
    expect(
      Object.keys(signIn?.requestBody?.content['application/json']?.schema.properties ?? {}).sort(),
    ).toEqual(['email', 'password', 'tenantId'])
    expect(
      Object.keys(signIn?.responses['200']?.content?.['application/json']?.schema?.properties ?? {}).sort(),
    ).toEqual(['csrfToken', 'tenant', 'user'])
  })

  it('gives each public operation its scope, for an API key or an OAuth token', () => {
    for (const route of publicRoutes) {
      expect(operation(route)?.security, `${route.method} ${route.url}`).toEqual([
        { bearerAuth: [route.scope] },
        { oauth2: [route.scope] },
      ])
    }
  })

  it('documents the 400, 401 and 403 problems, and a success, for each public operation', () => {
    for (const route of publicRoutes) {
      const label = `${route.method} ${route.url}`
      const responses = operation(route)?.responses ?? {}
      for (const status of ['400', '401', '403']) {
        const schema = responses[status]?.content?.[PROBLEM_CONTENT_TYPE]?.schema
        expect(schema, `${label} ${status}`).toBeDefined()
        expect(Object.keys(schema?.properties ?? {}), `${label} ${status}`).toEqual(
          expect.arrayContaining(['type', 'title', 'status', 'code', 'instance']),
        )
      }
      expect(
        Object.keys(responses).some((s) => /^2\d\d$/.test(s)),
        `${label} documents a success`,
      ).toBe(true)
    }
  })

  it('documents request bodies and queries from the schemas that validate them', () => {
    const postPunch = spec.paths['/api/public/v1/attendance/punches']?.post
    const body = postPunch?.requestBody?.content['application/json']?.schema
    expect(Object.keys(body?.properties ?? {}).sort()).toEqual(
      Object.keys(PunchInputSchema.properties).sort(),
    )
    const listEmployees = spec.paths['/api/public/v1/employees']?.get
    const query = (listEmployees?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(query.sort()).toEqual(Object.keys(EmployeeListQuerySchema.properties).sort())
  })

  it('leaves operations without a credential without a security requirement', () => {
    expect(spec.paths['/healthz']?.get).toBeDefined()
    expect(spec.paths['/healthz']?.get?.security).toBeUndefined()
    expect(spec.paths['/openapi.json']).toBeUndefined()
  })

  it('serves the same document at /docs/json', async () => {
    const res = await cloud.app.inject({ method: 'GET', url: '/docs/json' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual(spec)
  })

  it('serves the Swagger UI as HTML at /docs', async () => {
    for (const url of ['/docs', '/docs/']) {
      const res = await cloud.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/html/)
      expect(res.body).toMatch(/<html/i)
      expect(res.body).toContain('swagger-ui')
    }
  })
})
