/**
 * OWASP API4:2023 Unrestricted Resource Consumption: body sizes, limit bounds, rate
 * limits, batch sizes, slow clients. From the route table and the OpenAPI document: every route
 * that reads a body refuses one over the limit (413), every listing a limit outside 1..200, every
 * bounded number, array and string one past its bound (400); every kind of credential runs into its
 * per-minute limit (429 with RateLimit headers). Slow clients are in api4-slow-clients.test.ts.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { MAX_IMPORT_LINES } from '../../../cloud/features/employees/service.js'
import { MAX_BATCH_PUNCHES } from '../../../shared/punch.js'
import { bearer, describeEachDatabase, TEST_ACTOR } from '../../support/cloud-harness.js'
import {
  type JsonSchema,
  type OpenApiDocument,
  openApiOf,
  operationOf,
  queryParameters,
  walkSchema,
} from './openapi-walk.js'
import {
  accessToken,
  CONSOLE,
  callersOf,
  codeOf,
  createTenantFixture,
  familyOf,
  freshSession,
  ownRequest,
  type Planned,
  PUBLIC,
  routeKey,
  send,
  type TenantFixture,
  withQuery,
} from './security-kit.js'

const BODY_LIMIT = 1024 * 1024
const TAKES_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** A valid element for each bounded array of a request body, to fill it past its bound. */
const ARRAY_ELEMENTS: Record<string, unknown> = {
  events: 'webhook.test',
  scopes: 'employees:read',
  punches: { employeeCode: 'E001', punchType: 'IN' },
  employeeCodes: 'E001',
  weeklyOffDays: 1,
}

function expectProblem(res: LightMyRequestResponse, status: number, code: string, label: string) {
  expect(res.statusCode, `${label}: ${res.body.slice(0, 300)}`).toBe(status)
  expect(codeOf(res), label).toBe(code)
}

/** Sets `value` at a JSON pointer of `body` (`*`: the whole array, as one element). */
function setAt(body: Record<string, unknown>, pointer: string, value: unknown): void {
  const parts = pointer.split('/').slice(1)
  let node: Record<string, unknown> = body
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1
    if (parts[i + 1] === '*') {
      node[part] = [value]
      return
    }
    if (last) node[part] = value
    else {
      if (typeof node[part] !== 'object' || node[part] === null) node[part] = {}
      node = node[part] as Record<string, unknown>
    }
  }
}

const jsonBodyOf = (planned: Planned): Record<string, unknown> =>
  planned.options.payload === undefined ? {} : JSON.parse(String(planned.options.payload))

describeEachDatabase('OWASP API4: bounds on what one request may cost', (cloud) => {
  let t: TenantFixture
  let spec: OpenApiDocument

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
    spec = await openApiOf(cloud.app)
  }, 60_000)

  /** Every documented JSON request body, with its route. */
  const jsonBodies = () =>
    cloud.app.routeTable.flatMap((route) => {
      const schema = operationOf(spec, route)?.requestBody?.content['application/json']?.schema
      const family = familyOf(route)
      return schema && route.method !== 'HEAD' && family !== 'oauth' ? [{ route, schema }] : []
    })

  it('answers a body over the limit with 413 payload_too_large on every route that reads one', async () => {
    let tried = 0
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      if (!TAKES_BODY.has(route.method) || !['public', 'console', 'session', 'oauth'].includes(family))
        continue
      const planned = await ownRequest(cloud, route, t, callersOf(family, t)[0])
      const headers = planned.options.headers as Record<string, string>
      const type = headers['content-type'] ?? 'application/json'
      headers['content-type'] = type
      const shell =
        type === 'text/csv' ? 'employeeCode,name\n' : type.includes('json') ? '{"pad":""}' : 'pad='
      const padding = 'x'.repeat(BODY_LIMIT + 1 - shell.length)
      planned.options.payload = type.includes('json') ? `{"pad":"${padding}"}` : `${shell}${padding}`
      expect(Buffer.byteLength(String(planned.options.payload))).toBe(BODY_LIMIT + 1)
      expectProblem(await send(cloud, planned), 413, 'payload_too_large', routeKey(route))
      tried++
    }
    expect(tried).toBeGreaterThanOrEqual(20)
  }, 120_000)

  it('refuses every bounded query number one past its bound, and a limit outside 1..200', async () => {
    let tried = 0
    for (const route of cloud.app.routeTable) {
      if (route.method !== 'GET') continue
      for (const param of queryParameters(operationOf(spec, route))) {
        const schema = param.schema ?? {}
        if (schema.type !== 'integer') continue
        const bad: string[] = []
        if (typeof schema.maximum === 'number') bad.push(String(schema.maximum + 1))
        if (typeof schema.minimum === 'number') bad.push(String(schema.minimum - 1))
        if (param.name === 'limit') {
          expect([schema.minimum, schema.maximum], routeKey(route)).toEqual([1, 200])
          bad.push('0', '201', '-1', '1.5', 'ten', '1e3')
        }
        for (const caller of callersOf(familyOf(route), t)) {
          const planned = await ownRequest(cloud, route, t, caller)
          const base = planned.options.url as string
          for (const value of bad) {
            planned.options.url = withQuery(base, { [param.name]: value })
            const res = await send(cloud, planned)
            const label = `${routeKey(route)} ${param.name}=${value}`
            expectProblem(res, 400, 'validation_failed', label)
            expect(res.json().errors[0], label).toMatchObject({ in: 'query', pointer: `#/${param.name}` })
            tried++
          }
          for (const value of [schema.minimum, schema.maximum]) {
            planned.options.url = withQuery(base, { [param.name]: String(value) })
            expect((await send(cloud, planned)).statusCode, `${routeKey(route)} ${param.name}=${value}`).toBe(
              200,
            )
          }
        }
      }
    }
    expect(tried).toBeGreaterThanOrEqual(50)
  }, 120_000)

  it(`refuses every bounded array one past its bound: ${MAX_BATCH_PUNCHES + 1} punches, 51 events, 4 scopes`, async () => {
    const seen: string[] = []
    for (const { route, schema } of jsonBodies()) {
      for (const node of walkSchema(spec, schema)) {
        if (typeof node.schema.maxItems !== 'number') continue
        const name = node.pointer.split('/').pop() as string
        const element = ARRAY_ELEMENTS[name]
        if (element === undefined)
          expect.fail(`${routeKey(route)} ${node.pointer}: add a valid element to ARRAY_ELEMENTS`)
        const planned = await ownRequest(cloud, route, t, callersOf(familyOf(route), t)[0])
        const body = jsonBodyOf(planned)
        setAt(
          body,
          node.pointer,
          Array.from({ length: node.schema.maxItems + 1 }, () => element),
        )
        planned.options.payload = JSON.stringify(body)
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} ${node.pointer}`
        expectProblem(res, 400, 'validation_failed', label)
        expect(
          res.json().errors.map((e: { pointer: string }) => e.pointer),
          label,
        ).toContain(`#${node.pointer}`)
        seen.push(name)
      }
    }
    expect(new Set(seen)).toEqual(new Set(Object.keys(ARRAY_ELEMENTS)))
    // The largest batch is taken.
    const full = await cloud.app.inject({
      method: 'POST',
      url: `${PUBLIC}/attendance/punches/batch`,
      headers: bearer(t.apiKey),
      payload: {
        punches: Array.from({ length: MAX_BATCH_PUNCHES }, () => ({
          employeeCode: t.objects.employeeCode,
          punchType: 'IN',
        })),
      },
    })
    expect(full.statusCode, full.body.slice(0, 300)).toBe(200)
    expect(full.json().summary.received).toBe(MAX_BATCH_PUNCHES)
  }, 120_000)

  it(`refuses an employee import of more than ${MAX_IMPORT_LINES} lines`, async () => {
    const lines = Array.from({ length: MAX_IMPORT_LINES + 1 }, (_, i) => `X${i},N`).join('\n')
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${CONSOLE}/employees/import`,
      headers: { ...bearer(t.adminToken), 'content-type': 'text/csv' },
      payload: `employeeCode,name\n${lines}\n`,
    })
    expectProblem(res, 400, 'invalid_csv', 'import')
    const listed = await cloud.services.employees.list(t.id, { limit: 200 })
    expect(listed.data.some((e) => e.employeeCode === 'X0')).toBe(false)
  })

  it('bounds every string a request carries, and refuses one past its bound', async () => {
    const unbounded: string[] = []
    let tried = 0
    for (const { route, schema } of jsonBodies()) {
      for (const node of walkSchema(spec, schema)) {
        if (!isBoundedStringField(node.schema, node.pointer)) {
          if (isFreeString(node.schema) && node.pointer !== '')
            unbounded.push(`${routeKey(route)} ${node.pointer}`)
          continue
        }
        const planned = await ownRequest(cloud, route, t, callersOf(familyOf(route), t)[0])
        const body = jsonBodyOf(planned)
        const long =
          node.schema.maxLength === undefined
            ? '2026-11-21T09:00:00+05:30'.repeat(400)
            : 'a'.repeat(node.schema.maxLength + 1)
        setAt(body, node.pointer, long)
        planned.options.payload = JSON.stringify(body)
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} ${node.pointer}`
        expectProblem(res, 400, 'validation_failed', label)
        expect(
          res.json().errors.map((e: { pointer: string }) => e.pointer),
          label,
        ).toContain(`#${node.pointer.replace('/*', '/0')}`)
        tried++
      }
    }
    expect(unbounded).toEqual([])
    for (const route of cloud.app.routeTable) {
      if (route.method !== 'GET') continue
      for (const param of queryParameters(operationOf(spec, route))) {
        const schema = param.schema ?? {}
        if (schema.type !== 'string' || schema.enum) continue
        const planned = await ownRequest(cloud, route, t, callersOf(familyOf(route), t)[0])
        const long = schema.maxLength === undefined ? 'x'.repeat(10_000) : 'a'.repeat(schema.maxLength + 1)
        planned.options.url = withQuery(String(planned.options.url), { [param.name]: long })
        const label = `${routeKey(route)} ?${param.name}`
        if (
          schema.maxLength === undefined &&
          schema.format !== 'date-time' &&
          !isBoundedPattern(schema.pattern)
        )
          unbounded.push(label)
        expectProblem(await send(cloud, planned), 400, 'validation_failed', label)
        tried++
      }
    }
    expect(unbounded).toEqual([])
    // Idempotency-Key: at most 255 characters.
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${PUBLIC}/attendance/punches`,
      headers: { ...bearer(t.apiKey), 'idempotency-key': 'k'.repeat(300) },
      payload: { employeeCode: t.objects.employeeCode, punchType: 'IN' },
    })
    expect(res.statusCode).toBe(400)
    expect(tried).toBeGreaterThanOrEqual(25)
  }, 180_000)
})

const isString = (schema: JsonSchema) =>
  schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))

/** A string that is not one of a list of values. */
const isFreeString = (schema: JsonSchema) => isString(schema) && schema.enum === undefined

/** An anchored pattern without an open-ended repeat: it bounds the length by itself. */
const isBoundedPattern = (pattern: unknown) =>
  typeof pattern === 'string' && /^\^.*\$$/.test(pattern) && !/[*+]|\{\d+,\}/.test(pattern)

/**
 * A string with a maximum length, a date-time (RFC 3339 has one; the parser refuses anything
 * longer) or a pattern that bounds it.
 */
function isBoundedStringField(schema: JsonSchema, pointer: string): boolean {
  if (!isFreeString(schema) || pointer === '') return false
  return schema.maxLength !== undefined || schema.format === 'date-time' || isBoundedPattern(schema.pattern)
}

describeEachDatabase('OWASP API4: every credential runs into its per-minute limit', (cloud) => {
  let limited: FastifyInstance
  let t: TenantFixture
  const LIMIT = 3

  beforeAll(async () => {
    t = await createTenantFixture(cloud)
    // The console API's limit is the server's (HAJRI_CONSOLE_RATE_LIMIT): an app of its own.
    limited = await buildApp({
      config: { bodyLimitBytes: BODY_LIMIT, trustProxy: false, logLevel: 'silent', consoleRateLimit: LIMIT },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
    })
    await limited.ready()
  }, 60_000)
  afterAll(async () => {
    await limited?.close()
  })

  function expectLimited(responses: LightMyRequestResponse[], label: string) {
    expect(
      responses.map((r) => r.statusCode),
      label,
    ).toEqual([...Array(LIMIT).fill(200), 429])
    for (const [i, res] of responses.entries()) {
      expect(res.headers['ratelimit-limit'], label).toBe(String(LIMIT))
      expect(res.headers['ratelimit-remaining'], label).toBe(String(Math.max(0, LIMIT - 1 - i)))
      expect(Number(res.headers['ratelimit-reset']), label).toBeGreaterThan(0)
    }
    const refused = responses.at(-1) as LightMyRequestResponse
    expect(codeOf(refused), label).toBe('rate_limited')
    expect(Number(refused.headers['retry-after']), label).toBeGreaterThan(0)
  }

  const burst = async (count: number, request: () => Promise<LightMyRequestResponse>) => {
    const out: LightMyRequestResponse[] = []
    for (let i = 0; i < count; i++) out.push(await request())
    return out
  }

  it('limits an API key, and every token of an OAuth app together, to their own rate', async () => {
    const key = await cloud.createApiKey(t.id, ['employees:read'], { rateLimitPerMinute: LIMIT })
    const get = (token: string) => () =>
      cloud.app.inject({ method: 'GET', url: `${PUBLIC}/employees`, headers: bearer(token) })
    expectLimited(await burst(LIMIT + 1, get(key)), 'API key')
    const app = await cloud.services.oauthApps.create(
      t.id,
      { name: 'limited', scopes: ['employees:read'], rateLimitPerMinute: LIMIT },
      TEST_ACTOR,
    )
    const tokens = [
      await accessToken(cloud, app.clientId, app.clientSecret),
      await accessToken(cloud, app.clientId, app.clientSecret),
    ]
    let i = 0
    expectLimited(await burst(LIMIT + 1, () => get(tokens[i++ % 2] as string)()), 'OAuth tokens of one app')
  })

  it('limits an admin token and a console session to HAJRI_CONSOLE_RATE_LIMIT', async () => {
    const token = await cloud.createAdminToken(t.id)
    const byToken = () =>
      limited.inject({ method: 'GET', url: `${CONSOLE}/webhooks`, headers: bearer(token) })
    expectLimited(await burst(LIMIT + 1, byToken), 'admin token')
    const { browser } = await freshSession(cloud, t)
    const bySession = () =>
      limited.inject({
        method: 'GET',
        url: `${CONSOLE}/webhooks`,
        cookies: { hajri_session: browser.cookie },
      })
    expectLimited(await burst(LIMIT + 1, bySession), 'console session')
  })
})
