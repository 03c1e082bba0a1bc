/**
 * OWASP API9:2023 Improper Inventory Management: the OpenAPI document lists every route,
 * and a test compares it with the app's route table. Both ways, by method and path: every route the
 * app serves is documented, and every documented operation is served. The only routes left out of
 * the document are named below: the document itself and its viewer, and the console's files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TestCloud } from '../../support/cloud-harness.js'
import { type OpenApiDocument, openApiOf, openApiPath } from './openapi-walk.js'
import { routeKey } from './security-kit.js'

/** Served, and rightly not in the document. */
const UNDOCUMENTED: Record<string, string> = {
  'GET /openapi.json': 'the OpenAPI document itself',
  'GET /docs': 'Swagger UI, the document’s viewer',
  'GET /docs/json': 'the OpenAPI document, for Swagger UI',
  'GET /docs/yaml': 'the OpenAPI document as YAML, for Swagger UI',
  'GET /docs/static/index.html': 'Swagger UI’s page',
  'GET /docs/static/swagger-initializer.js': 'Swagger UI’s settings',
  'GET /docs/static/*': 'Swagger UI’s files',
  'GET /console': "the console's page",
  'GET /console/*': "the console's files",
}

describe('OWASP API9: the OpenAPI document and the route table agree', () => {
  const cloud = new TestCloud('sqlite')
  let spec: OpenApiDocument
  let served: Set<string>
  let documented: Set<string>

  beforeAll(async () => {
    await cloud.start()
    spec = await openApiOf(cloud.app)
    // HEAD is Fastify's automatic twin of each GET, documented with it.
    served = new Set(
      cloud.app.routeTable.filter((r) => r.method !== 'HEAD').map((r) => `${r.method} ${openApiPath(r.url)}`),
    )
    documented = new Set(
      Object.entries(spec.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
      ),
    )
  })
  afterAll(() => cloud.stop())

  it('documents every route the app serves, but the named few', () => {
    const missing = [...served].filter((route) => !documented.has(route)).sort()
    expect(missing).toEqual(Object.keys(UNDOCUMENTED).sort())
    expect(served.size).toBeGreaterThan(40)
  })

  it('documents nothing the app does not serve', () => {
    expect([...documented].filter((route) => !served.has(route))).toEqual([])
  })

  it('has a GET for every HEAD', () => {
    for (const route of cloud.app.routeTable.filter((r) => r.method === 'HEAD'))
      expect(served, routeKey(route)).toContain(`GET ${openApiPath(route.url)}`)
  })

  it('keeps the document’s own routes and the console’s files out of the public API and the console API', () => {
    for (const route of Object.keys(UNDOCUMENTED)) expect(route).not.toMatch(/ \/api\//)
  })
})
