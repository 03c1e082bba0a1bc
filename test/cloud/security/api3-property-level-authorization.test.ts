/**
 * OWASP API3:2023 Broken Object Property Level Authorization: no unknown property
 * accepted, no internal property leaked. Inbound: every request schema of the OpenAPI document
 * refuses properties it does not name, and every route of the route table, sent its valid request
 * plus tenantId, id, createdAt, keyHash and the like, answers 400 naming each (a route without a body
 * takes none). Outbound: no response schema names a tenant id, a hash or a sealed secret, secrets
 * appear only in the answers that create them, and real answers of every route bear that out.
 */
import { beforeAll, expect, it } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { bearer, describeEachDatabase } from '../../support/cloud-harness.js'
import {
  isObjectSchema,
  type JsonSchema,
  type OpenApiDocument,
  openApiOf,
  openApiPath,
  operationOf,
  queryParameters,
  resolve,
  walkSchema,
} from './openapi-walk.js'
import {
  CONSOLE,
  callersOf,
  codeOf,
  createTenantFixture,
  familyOf,
  OAUTH,
  ownRequest,
  PUBLIC,
  routeKey,
  send,
  type TenantFixture,
  withQuery,
} from './security-kit.js'

/** RFC 6749 §3.2: "The authorization server MUST ignore unrecognized request parameters." */
const OAUTH_BODIES = new Set([`POST ${OAUTH}/token`, `POST ${OAUTH}/revoke`, `POST ${OAUTH}/introspect`])

/** What a client might try to set, or read, that only the server may: none is any route's field. */
const MASS_ASSIGNMENT = {
  tenantId: 'ten_00000000000000000000000000',
  tenant_id: 'ten_00000000000000000000000000',
  id: 'key_00000000000000000000000000',
  createdAt: '2020-01-01T00:00:00Z',
  updatedAt: '2020-01-01T00:00:00Z',
  keyHash: '0'.repeat(64),
  secretHash: '0'.repeat(64),
  passwordHash: 'scrypt$1$1$1$AA==$AA==',
  sealedSecret: 'v1.AAAA.AAAA',
  revokedAt: null,
}

/** Names no answer may have: the tenant is the credential's, hashes and sealed secrets never leave. */
const INTERNAL_NAME = /tenant_?id|hash|sealed|^password$|salt|nonce/i

/** The only places a secret is shown (once): the answers that create or rotate it, or reveal it on purpose. */
const SECRET_FIELDS: Record<string, string[]> = {
  key: [`POST ${CONSOLE}/api-keys`],
  clientSecret: [`POST ${CONSOLE}/oauth-apps`, `POST ${CONSOLE}/oauth-apps/{appId}/rotate-secret`],
  secret: [
    `POST ${CONSOLE}/webhooks`,
    `POST ${CONSOLE}/webhooks/{endpointId}/rotate-secret`,
    `POST ${CONSOLE}/webhooks/{endpointId}/reveal-secret`,
  ],
  temporaryPassword: [`POST ${CONSOLE}/users`],
  access_token: [`POST ${OAUTH}/token`],
  csrfToken: [`POST ${CONSOLE}/session`, `GET ${CONSOLE}/session`],
}

/** Free-form parts of answers (no listed properties), each holding nothing internal: checked in real answers below. */
const FREE_FORM: Record<string, string[]> = {
  [`GET ${CONSOLE}/audit`]: ['/data/*/details'],
  [`GET ${PUBLIC}/webhook-event-types`]: ['/data/*/schema'],
}

/** Secrets as Hajri issues them, and webhook secrets sealed at rest: the full values, not their prefixes. */
const SECRET_VALUES: [string, RegExp][] = [
  ['API key', /hjk_[0-9A-Za-z]{36}/],
  ['client secret', /hjs_[0-9A-Za-z]{46}/],
  ['access token', /hja_[0-9A-Za-z]{46}/],
  ['admin token', /hjt_[0-9A-Za-z]{46}/],
  ['console session', /hjw_[0-9A-Za-z]{46}/],
  ['webhook secret', /whsec_[A-Za-z0-9+/]{32}/],
]
const SEALED = /v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{20,}/
const SHA256_HEX = /^[0-9a-f]{64}$/

/** What is wrong with an answer's JSON: internal names, hashes, sealed values, secrets outside their field. */
function problemsIn(value: unknown, operation: string, path = '', names = true): string[] {
  const out: string[] = []
  if (typeof value === 'string') {
    const field = path.split('/').pop() ?? ''
    if (SEALED.test(value)) out.push(`${path}: a sealed secret`)
    if (SHA256_HEX.test(value) && field !== 'sha256') out.push(`${path}: a SHA-256`)
    for (const [what, pattern] of SECRET_VALUES) {
      if (pattern.test(value) && !(SECRET_FIELDS[field] ?? []).includes(operation))
        out.push(`${path}: a ${what}`)
    }
    return out
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => problemsIn(v, operation, `${path}/${i}`, names))
  if (value && typeof value === 'object') {
    for (const [name, child] of Object.entries(value)) {
      if (names && INTERNAL_NAME.test(name)) out.push(`${path}/${name}: an internal property`)
      out.push(...problemsIn(child, operation, `${path}/${name}`, names))
    }
  }
  return out
}

const documented = (route: RouteRecord) =>
  `${route.method === 'HEAD' ? 'GET' : route.method} ${openApiPath(route.url)}`

describeEachDatabase('OWASP API3: object properties', (cloud) => {
  let t: TenantFixture
  let spec: OpenApiDocument

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
    spec = await openApiOf(cloud.app)
  }, 60_000)

  const operations = () =>
    Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
    )

  it('documents every JSON request body as refusing properties it does not name', () => {
    let bodies = 0
    for (const { key, op } of operations()) {
      const schema = op.requestBody?.content['application/json']?.schema
      if (!schema) continue
      bodies++
      const objects = walkSchema(spec, schema).filter((n) => isObjectSchema(n.schema))
      expect(objects.length, key).toBeGreaterThan(0)
      for (const node of objects) {
        if (OAUTH_BODIES.has(key)) expect(node.schema.additionalProperties, key).not.toBe(false)
        else expect(node.schema.additionalProperties, `${key} ${node.pointer || '/'}`).toBe(false)
      }
    }
    expect(bodies).toBeGreaterThanOrEqual(12)
  })

  it('refuses an unknown property on every route that takes input, naming each', async () => {
    let tried = 0
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      if (route.method === 'GET' || route.method === 'HEAD') continue
      if (family !== 'public' && family !== 'console' && family !== 'session') continue
      const key = routeKey(route)
      const planned = await ownRequest(cloud, route, t, callersOf(family, t)[0])
      const type = String((planned.options.headers as Record<string, string>)['content-type'] ?? '')
      const op = operationOf(spec, route)
      const known = Object.keys(
        resolve(spec, op?.requestBody?.content['application/json']?.schema ?? {}).properties ?? {},
      )
      const extra = Object.fromEntries(
        Object.entries(MASS_ASSIGNMENT).filter(([name]) => !known.includes(name)),
      )
      if (type === 'text/csv') {
        // The CSV's columns are its properties: an unknown one refuses the file.
        planned.options.payload = `tenantId,${String(planned.options.payload)}`.replace('\n', `\n${t.id},`)
        const res = await send(cloud, planned)
        expect(res.statusCode, `${key}: ${res.body}`).toBe(400)
        expect(codeOf(res), key).toBe('invalid_csv')
        tried++
        continue
      }
      const body = planned.options.payload === undefined ? {} : JSON.parse(String(planned.options.payload))
      const batch = Array.isArray(body.punches)
      if (batch) body.punches[0] = { ...body.punches[0], ...extra }
      else Object.assign(body, extra)
      planned.options.payload = JSON.stringify(body)
      planned.options.headers = { ...(planned.options.headers as object), 'content-type': 'application/json' }
      const res = await send(cloud, planned)
      const prefix = batch ? '#/punches/0' : '#'
      // A batch takes each punch on its own: the one with unknown fields is rejected, alone.
      const problem = batch ? res.json().results?.[0]?.problem : res.json()
      if (batch) expect(res.statusCode, `${key}: ${res.body}`).toBe(200)
      else expect(res.statusCode, `${key}: ${res.body}`).toBe(400)
      expect(problem?.code, key).toBe('validation_failed')
      const pointers = (problem?.errors ?? []).map((e: { pointer: string }) => e.pointer)
      for (const name of Object.keys(extra)) expect(pointers, key).toContain(`${prefix}/${name}`)
      tried++
    }
    expect(tried).toBeGreaterThanOrEqual(20)
  }, 120_000)

  it('refuses an unknown query parameter on every route that takes a query', async () => {
    let tried = 0
    for (const route of cloud.app.routeTable) {
      if (route.method !== 'GET' || queryParameters(operationOf(spec, route)).length === 0) continue
      const family = familyOf(route)
      for (const caller of callersOf(family, t)) {
        const planned = await ownRequest(cloud, route, t, caller)
        planned.options.url = withQuery(String(planned.options.url), { tenantId: t.id, id: 'x' })
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} by ${caller.kind}`
        expect(res.statusCode, `${label}: ${res.body}`).toBe(400)
        const pointers = res.json().errors.map((e: { in: string; pointer: string }) => `${e.in} ${e.pointer}`)
        expect(pointers, label).toEqual(expect.arrayContaining(['query #/tenantId', 'query #/id']))
        tried++
      }
    }
    expect(tried).toBeGreaterThanOrEqual(8)
  })

  it('ignores, as RFC 6749 §3.2 requires, unknown OAuth parameters: a tenant_id names no other tenant', async () => {
    const other = await createTenantFixture(cloud)
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${OAUTH}/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: t.client.clientId,
        client_secret: t.client.clientSecret,
        tenant_id: other.id,
        tenantId: other.id,
      }).toString(),
    })
    expect(res.statusCode, res.body).toBe(200)
    const listed = await cloud.app.inject({
      method: 'GET',
      url: `${PUBLIC}/employees/${other.objects.employeeCode}`,
      headers: bearer(res.json().access_token),
    })
    expect(listed.statusCode).toBe(404)
  })

  it('documents no internal property in any answer, and secrets only in the answers that show them once', () => {
    const freeForm: string[] = []
    for (const { key, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!/^2/.test(status)) continue
        for (const content of Object.values(response.content ?? {})) {
          if (!content.schema) continue
          for (const node of walkSchema(spec, content.schema)) {
            const name = node.pointer.split('/').pop() ?? ''
            expect(INTERNAL_NAME.test(name), `${key} ${status} ${node.pointer}`).toBe(false)
            if (name in SECRET_FIELDS) expect(SECRET_FIELDS[name], `${key} ${node.pointer}`).toContain(key)
            const inside = freeForm.some((f) => `${key} ${node.pointer}`.startsWith(`${f}/`))
            if (isFreeForm(node.schema) && !inside) freeForm.push(`${key} ${node.pointer}`)
          }
        }
      }
    }
    const expected = Object.entries(FREE_FORM).flatMap(([key, pointers]) =>
      pointers.map((p) => `${key} ${p}`),
    )
    expect(freeForm.sort()).toEqual(expected.sort())
  })

  it('shows in real answers of every route no internal property, no hash, no sealed secret, no secret out of place', async () => {
    // The OpenAPI document names request fields such as `password`: its names are not checked, its values are.
    const answers: { operation: string; body: string; type: string; names?: boolean }[] = []
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      for (const caller of callersOf(family, t)) {
        const planned = await ownRequest(cloud, route, t, caller)
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} by ${caller.kind}`
        if (family === 'docs' || family === 'static') expect(res.statusCode, label).toBeLessThan(500)
        else expect(res.statusCode, `${label}: ${res.body.slice(0, 300)}`).toBeLessThan(300)
        answers.push({
          operation: documented(route),
          body: res.body,
          type: String(res.headers['content-type']),
          names: family !== 'docs',
        })
      }
    }
    // What the sweep left in the audit log and the webhook deliveries' bodies, read back.
    const admin = bearer(t.adminToken)
    const audit = await cloud.app.inject({ method: 'GET', url: `${CONSOLE}/audit?limit=200`, headers: admin })
    answers.push({ operation: `GET ${CONSOLE}/audit`, body: audit.body, type: 'application/json' })
    const deliveries = await cloud.app.inject({
      method: 'GET',
      url: `${CONSOLE}/webhook-deliveries?limit=200`,
      headers: admin,
    })
    for (const { id } of deliveries.json().data as { id: string }[]) {
      const detail = await cloud.app.inject({
        method: 'GET',
        url: `${CONSOLE}/webhook-deliveries/${id}`,
        headers: admin,
      })
      answers.push({
        operation: `GET ${CONSOLE}/webhook-deliveries/{deliveryId}`,
        body: detail.body,
        type: 'application/json',
      })
      // The event as sent is JSON in a string: its fields are checked as fields.
      answers.push({ operation: 'webhook event', body: detail.json().body, type: 'application/json' })
    }
    expect(answers.length).toBeGreaterThan(60)
    const problems: string[] = []
    for (const { operation, body, type, names } of answers) {
      if (/json/.test(type) && body !== '')
        problems.push(...problemsIn(JSON.parse(body), operation, '', names).map((p) => `${operation} ${p}`))
      else if (SEALED.test(body) || SECRET_VALUES.some(([, re]) => re.test(body)))
        problems.push(`${operation}: a secret in ${type}`)
    }
    expect(problems).toEqual([])
  }, 180_000)
})

/**
 * A part of an answer that may hold anything: an object open to unlisted properties, or a value of
 * no stated type. Everywhere else the serializer (fast-json-stringify) writes the listed properties
 * only, so an internal field cannot slip out even if a service returned one.
 */
function isFreeForm(schema: JsonSchema): boolean {
  if (isObjectSchema(schema)) {
    const onlyListed =
      schema.properties !== undefined &&
      schema.additionalProperties === undefined &&
      schema.patternProperties === undefined
    return schema.additionalProperties !== false && !onlyListed
  }
  const constrained = [
    'type',
    'properties',
    'items',
    'anyOf',
    'oneOf',
    'allOf',
    'enum',
    'const',
    '$ref',
    'not',
  ]
  return constrained.every((k) => schema[k] === undefined)
}
