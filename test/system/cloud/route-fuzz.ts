/**
 * 1,000 generated malformed bodies and query strings per route (fast-check) get 4xx problems,
 * never a 5xx. Routes come from the app's own route table, so a new route is fuzzed
 * without touching this file; one the generators cannot handle fails instead of escaping.
 * The OAuth endpoints (docs/decisions/0016-oauth-client-credentials.md) are fuzzed with form and JSON bodies
 * and every kind of client authentication, and checked against RFC 6749 §5.2 instead: their errors are
 * application/json with `error` and `error_description` (OAuth client libraries require it), the RFC 9457
 * members beside. Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { openDatabase } from '../../../cloud/db/database.js'
import { ATTENDANCE_CSV_COLUMNS } from '../../../cloud/features/attendance/attendance-service.js'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { compileCheck, validatorCompiler } from '../../../cloud/validation.js'
import { PROBLEM_CATALOG, type ProblemCode, ProblemSchema } from '../../../shared/problem.js'
import { PunchInputSchema, PunchSchema } from '../../../shared/punch.js'
import { SCOPES } from '../../../shared/scopes.js'
import { formatTimestamp, nowMicros, parseTimestamp } from '../../../shared/time.js'
import { isOAuthRoute, OAuthResponseChecks, setUpOAuthFuzz } from '../../cloud/features/oauth/oauth-fuzz.js'
import {
  isSessionRoute,
  type SessionFuzzFixtures,
  setUpSessionFuzz,
} from '../../cloud/features/sessions/session-fuzz.js'
import { bearer, employee, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import {
  FORM_CONTENT_TYPE,
  type FuzzContext,
  type FuzzRequest,
  type JsonSchema,
  type OpenApiOperation,
  requestArbitrary,
  valueArbitrary,
} from '../../support/request-arbitrary.js'
import { type AttendanceFuzzFixtures, setUpAttendanceFuzz } from './attendance-fuzz.js'
import { type ConsoleFuzzFixtures, isConsoleRoute, setUpConsoleFuzz } from './console-fuzz.js'

const RUNS = 1000
const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
// A handler that never answers is a defect too; inject has no timeout of its own.
const RESPONSE_TIMEOUT_MS = 10_000
/**
 * A hang guard for the setup: it hashes console passwords (scrypt at production cost) and runs a
 * dispatcher round and the attendance worker, minutes of work when the machine is shared.
 */
const SETUP_TIMEOUT_MS = 300_000
const SECOND = 1_000_000
const DAY = 86_400 * SECOND

/**
 * Documentation is @fastify/swagger's, not ours; HEAD is Fastify's automatic twin of each GET; the
 * console's static files take no input but a path (test/cloud/plugins/static-console.test.ts).
 */
function isStatic(url: string): boolean {
  return (
    url === '/openapi.json' ||
    url === '/docs' ||
    url.startsWith('/docs/') ||
    url === '/console' ||
    url.startsWith('/console/')
  )
}

function isSkipped(route: RouteRecord): boolean {
  return route.method === 'HEAD' || isStatic(route.url)
}

const TOKEN_URL = '/api/oauth/token'

// The routes are known only once an app is built, and vitest needs its tests before any hook runs: a
// throwaway app over an in-memory database lists them.
const FUZZED: RouteRecord[] = await (async () => {
  const app = await buildApp({
    config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
    database: openDatabase('sqlite::memory:'),
    logger: false,
  })
  await app.ready()
  const routes = app.routeTable.filter((r) => !isSkipped(r))
  await app.close()
  return routes
})()

const ACTIVE_CODES = ['E001', 'E002', 'e.003', 'A-9_z']
const INACTIVE_CODES = ['E050', 'E051']
const checkProblem = compileCheck(ProblemSchema)
const checkPunch = compileCheck(PunchSchema)
const DEVICE_TEXT = /^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$/
const LEAKS = [
  /\bat\s+\S+\s+\(/, // a stack frame
  /\.(?:ts|js|mjs|cjs):\d+/,
  /node_modules|\/work\//,
  /sqlite/i,
  /\bselect\s/i,
  /\binsert\s/i,
  /\bdelete\s+from\b/i,
  /syntax error|relation "|violates|invalid byte sequence|kysely/i,
  /\b(?:TypeError|RangeError|ReferenceError)\b|Maximum call stack|Cannot read propert/,
]

function withTimeout<T>(work: Promise<T>, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no response in ${RESPONSE_TIMEOUT_MS} ms: ${label}`)),
      RESPONSE_TIMEOUT_MS,
    )
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** The route a concrete path reaches: a request with an empty parameter may land on a sibling route. */
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const DEEP = 10_000

/**
 * Counterexamples the fuzz found, kept so they run on every seed (fast-check finds the rarer ones only
 * now and then). Each is minimal: the smallest request that still fails.
 */
const FOUND: { title: string; request: (key: string, adminToken: string) => FuzzRequest }[] = [
  {
    title: 'a caller-chosen X-Request-Id that looks like a stack frame, echoed in the problem',
    request: (key) => ({
      method: 'POST',
      url: '/api/public/v1/attendance/punches',
      headers: {
        authorization: `Bearer ${key}`,
        'x-request-id': '.ts:0aaa_Aaa:',
        'content-type': 'application/json',
      },
      payload: '0',
    }),
  },
  {
    title: 'a webhook endpoint description holding NUL (PostgreSQL refuses it)',
    request: (_key, adminToken) => ({
      method: 'POST',
      url: '/api/console/v1/webhooks',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://hooks.example.com/x', description: 'a\u0000b' }),
    }),
  },
  {
    title: 'an OAuth client id holding NUL, by HTTP Basic',
    request: () => ({
      method: 'POST',
      url: TOKEN_URL,
      headers: {
        authorization: `Basic ${Buffer.from('%00:x').toString('base64')}`,
        'content-type': FORM_CONTENT_TYPE,
      },
      payload: 'grant_type=client_credentials',
    }),
  },
  {
    title: 'an OAuth client id holding NUL, in the body',
    request: () => ({
      method: 'POST',
      url: TOKEN_URL,
      headers: { 'content-type': FORM_CONTENT_TYPE },
      payload: 'grant_type=client_credentials&client_id=%00&client_secret=x',
    }),
  },
  {
    title: 'a path parameter that is not valid percent-encoding',
    request: (key) => ({ method: 'GET', url: '/api/public/v1/employees/%', headers: bearer(key) }),
  },
  {
    title: 'a path parameter longer than maxParamLength',
    request: (key) => ({
      method: 'GET',
      url: `/api/public/v1/attendance/punches/${'A'.repeat(201)}`,
      headers: bearer(key),
    }),
  },
  {
    title: 'a batch item nested 10,000 deep, with an Idempotency-Key',
    request: (key) => ({
      method: 'POST',
      url: '/api/public/v1/attendance/punches/batch',
      headers: { ...bearer(key), 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
      payload: `{"punches":[${'['.repeat(DEEP)}${']'.repeat(DEEP)}]}`,
    }),
  },
  {
    title: 'a punch id holding NUL',
    request: (key) => ({ method: 'GET', url: '/api/public/v1/attendance/punches/%00', headers: bearer(key) }),
  },
  {
    title: 'an employee cursor holding NUL',
    request: (key) => ({
      method: 'GET',
      url: `/api/public/v1/employees?cursor=${cursorOf({ k: ['\u0000'] })}`,
      headers: bearer(key),
    }),
  },
  {
    title: 'an employee cursor whose status filter holds NUL',
    request: (key) => ({
      method: 'GET',
      url: `/api/public/v1/employees?cursor=${cursorOf({ s: '\u0000', k: ['x'] })}`,
      headers: bearer(key),
    }),
  },
  {
    title: 'a punch cursor holding NUL',
    request: (key) => ({
      method: 'GET',
      url: `/api/public/v1/attendance/punches?cursor=${cursorOf({ k: [1, '\u0000'] })}`,
      headers: bearer(key),
    }),
  },
  {
    title: 'a punch cursor whose employeeCode filter holds NUL',
    request: (key) => ({
      method: 'GET',
      url: `/api/public/v1/attendance/punches?cursor=${cursorOf({ e: '\u0000', k: [1, 'x'] })}`,
      headers: bearer(key),
    }),
  },
]

function matchRoute(method: string, url: string): RouteRecord | undefined {
  // Dot segments are resolved before the request is sent (by inject, as by any HTTP client).
  const path = new URL(url, 'http://localhost').pathname
  const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/')
  const candidates = FUZZED.filter((r) => {
    const pattern = r.url.split('/')
    return (
      r.method === method &&
      pattern.length === segments.length &&
      pattern.every((p, i) => (p.startsWith(':') ? segments[i] !== '' : p === segments[i]))
    )
  })
  const statics = (r: RouteRecord) => r.url.split('/').filter((p) => !p.startsWith(':')).length
  return candidates.sort((a, b) => statics(b) - statics(a))[0]
}

/** The generators' own checks: a fuzz that cannot reach a route, or sends only one body shape, proves nothing. */
export function checkRouteFuzzGenerators(): void {
  it('fails a route it has no generator strategy for, rather than skip it', () => {
    const ctx: FuzzContext = {
      hints: {},
      timestamp: fc.constant('2026-11-21T09:00:00Z'),
      authorization: fc.constant(undefined),
    }
    const operation: OpenApiOperation = { parameters: [] }
    expect(() => requestArbitrary({ method: 'OPTIONS', url: '/a' }, operation, ctx)).toThrow(
      /no generator strategy/,
    )
    expect(() => requestArbitrary({ method: 'GET', url: '/files/*' }, operation, ctx)).toThrow(
      /no generator strategy/,
    )
    expect(() => requestArbitrary({ method: 'GET', url: '/a/:id(^\\d+)' }, operation, ctx)).toThrow(
      /no generator strategy/,
    )
    expect(() => requestArbitrary({ method: 'GET', url: '/a' }, undefined, ctx)).toThrow(
      /no generator strategy/,
    )
    expect(() => requestArbitrary({ method: 'GET', url: '/a/:id' }, operation, ctx)).not.toThrow()
    // A text body (an employee CSV) needs near-valid text to start from.
    const csv: OpenApiOperation = { requestBody: { content: { 'text/csv': { schema: { type: 'string' } } } } }
    expect(() => requestArbitrary({ method: 'POST', url: '/a' }, csv, ctx)).toThrow(/no generator strategy/)
    const withCsv = { ...ctx, textBodies: { 'text/csv': fc.constant('employeeCode,name\nE1,A') } }
    expect(() => requestArbitrary({ method: 'POST', url: '/a' }, csv, withCsv)).not.toThrow()
  })

  it('generates form and JSON bodies for a form route, authenticated as its strategy says', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        grant_type: { type: 'string' },
        client_id: { type: 'string' },
        client_secret: { type: 'string' },
      },
    }
    const operation: OpenApiOperation = {
      requestBody: { content: { [FORM_CONTENT_TYPE]: { schema }, 'application/json': { schema } } },
    }
    const basicHeader = `Basic ${Buffer.from('c:s').toString('base64')}`
    const ctx: FuzzContext = {
      hints: { grant_type: fc.constant('client_credentials') },
      timestamp: fc.constant('2026-11-21T09:00:00Z'),
      authorization: fc.constant('Bearer not-for-form-routes'),
      clientAuthentication: {
        fields: ['client_id', 'client_secret'],
        arbitrary: fc.constantFrom(
          { authorization: basicHeader, params: [] },
          {
            authorization: undefined,
            params: [['client_id', 'c'] as [string, string], ['client_secret', 's'] as [string, string]],
          },
        ),
      },
    }
    const samples = fc.sample(requestArbitrary({ method: 'POST', url: '/token' }, operation, ctx), {
      numRuns: 1000,
      seed: 7,
    })
    const forms = samples
      .filter((r) => r.headers['content-type'] === FORM_CONTENT_TYPE && typeof r.payload === 'string')
      .map((r) => new URLSearchParams(r.payload as string))
    expect(samples.some((r) => r.headers.authorization === basicHeader)).toBe(true)
    expect(samples.every((r) => r.headers.authorization !== 'Bearer not-for-form-routes')).toBe(true)
    // Near-valid: the grant and the strategy's own parameters, the schema's client fields left to it.
    expect(
      forms.some((f) => f.get('grant_type') === 'client_credentials' && f.get('client_secret') === 's'),
    ).toBe(true)
    expect(
      forms.some((f) => f.getAll('grant_type').length > 1),
      'repeated parameters',
    ).toBe(true)
    expect(
      forms.some((f) => [...f.values()].some((v) => v.length >= 1024)),
      'values at the limit',
    ).toBe(true)
    expect(
      samples.some((r) => String(r.payload).length > 16 * 1024),
      'bodies past the form limit',
    ).toBe(true)
    expect(
      samples.some(
        (r) => r.headers['content-type'] === 'application/json' && String(r.payload).startsWith('{"'),
      ),
    ).toBe(true)
  })
}

/** The fuzz of every route, for one database's test cloud (route-fuzz.*.test.ts, one file per database). */
export function fuzzEveryRoute(cloud: TestCloud): void {
  let tenantId: string
  let key: string
  let ctx: FuzzContext
  /** The OAuth routes' context: the public one, with OAuth parameters and client authentication. */
  let oauthCtx: FuzzContext
  let oauthChecks: OAuthResponseChecks
  /** The console API's admin tokens and fixtures. */
  let consoleFuzz: ConsoleFuzzFixtures
  /** Shifts, policies, assignments, holidays and a job, and dates near today. */
  let attendanceFuzz: AttendanceFuzzFixtures
  /**
   * The console's session routes: users, session cookies and CSRF tokens
   * (docs/decisions/0046-console-csrf.md).
   */
  let sessionFuzz: SessionFuzzFixtures
  /** Every credential set up here: no response may echo one (a token response has a new one). */
  let secrets: string[]
  let operations: Record<string, Record<string, OpenApiOperation>>
  const startedAt = nowMicros()
  /** Responses per route by status, to show that the fuzz reached the handlers and the validators. */
  const seen = new Map<string, Map<number, number>>()
  const responseChecks = new Map<string, (value: unknown) => boolean>()

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [
      ...ACTIVE_CODES.map((code) => employee(code)),
      employee('E050', { status: 'INACTIVE' }),
      employee('E051', { status: 'TERMINATED' }),
    ])
    // Every scope, and a limit that fuzzing cannot reach, so requests get past authentication.
    const keys = cloud.services.apiKeys
    key = (await keys.create(tenantId, { scopes: [...SCOPES], rateLimitPerMinute: 100_000 }, TEST_ACTOR)).key
    const limitedKey = (await keys.create(tenantId, { scopes: ['employees:read'] }, TEST_ACTOR)).key

    const oauth = await setUpOAuthFuzz(cloud, tenantId, key)
    consoleFuzz = await setUpConsoleFuzz(cloud, tenantId)
    sessionFuzz = await setUpSessionFuzz(cloud)
    secrets = [...oauth.secrets, ...consoleFuzz.secrets, ...sessionFuzz.secrets, limitedKey]
    oauthChecks = new OAuthResponseChecks(oauth.clientIds)

    // Real ids and cursors, so that near-valid requests find something and mutated ones start from the real thing.
    const punchIds: string[] = []
    for (const [i, code] of ACTIVE_CODES.entries()) {
      for (const punchType of ['IN', 'OUT']) {
        const res = await cloud.app.inject({
          method: 'POST',
          url: '/api/public/v1/attendance/punches',
          headers: bearer(key),
          payload: {
            employeeCode: code,
            punchType,
            punchedAt: formatTimestamp(startedAt - (i + 1) * DAY),
            externalId: `seed-${code}-${punchType}`,
          },
        })
        expect(res.statusCode).toBe(201)
        punchIds.push(res.json().id)
      }
    }
    const cursors: string[] = []
    for (const url of [
      '/api/public/v1/employees?limit=1',
      '/api/public/v1/employees?limit=2&status=ACTIVE',
      `/api/public/v1/employees?limit=1&updatedSince=${encodeURIComponent(formatTimestamp(startedAt - DAY))}`,
      '/api/public/v1/attendance/punches?limit=1',
      '/api/public/v1/attendance/punches?limit=1&employeeCode=E001',
      `/api/public/v1/attendance/punches?limit=1&from=${encodeURIComponent(formatTimestamp(startedAt - 30 * DAY))}`,
    ]) {
      const cursor = (await cloud.app.inject({ method: 'GET', url, headers: bearer(key) })).json().nextCursor
      expect(typeof cursor).toBe('string')
      cursors.push(cursor)
    }

    // After the punches above, whose days it has the attendance worker make.
    attendanceFuzz = await setUpAttendanceFuzz(cloud, tenantId, {
      apiKey: key,
      accessToken: oauth.accessToken,
      adminToken: consoleFuzz.adminToken,
      employeeCode: ACTIVE_CODES[0] as string,
    })
    secrets.push(...attendanceFuzz.secrets)

    // Times from before the backfill window to past the allowed clock skew, in assorted offsets.
    const timestamp = fc
      .tuple(
        fc.integer({ min: -95 * 86_400, max: 600 }),
        fc.constantFrom(0, 330, -300, 345, 840, -720, 60),
        fc.constantFrom(0, 123_000, 123_456),
      )
      .map(([s, offset, fraction]) => formatTimestamp(startedAt + s * SECOND + fraction, offset))
    const codes = [...ACTIVE_CODES, ...INACTIVE_CODES, 'E999']
    ctx = {
      timestamp,
      hints: {
        employeeCode: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...codes) },
          { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/) },
        ),
        punchId: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...punchIds) },
          { weight: 1, arbitrary: fc.stringMatching(/^pun_[0-9A-HJKMNP-TV-Z]{26}$/) },
        ),
        cursor: fc.constantFrom(...cursors),
        externalId: fc.oneof(
          fc.constantFrom('ext-1', 'ext-2', 'seed-E001-IN', null),
          fc.stringMatching(/^[\x21-\x7E]{1,128}$/),
        ),
        'idempotency-key': fc.oneof(
          fc.constantFrom('key-1', 'key-2', '"key-3"'),
          fc.stringMatching(/^[\x21-\x7E]{1,40}$/),
        ),
      },
      authorization: fc.oneof(
        { weight: 75, arbitrary: fc.constant(`Bearer ${key}`) },
        { weight: 10, arbitrary: fc.constant(`Bearer ${oauth.accessToken}`) },
        {
          weight: 15,
          arbitrary: fc.constantFrom(
            ...oauth.refusedBearers.map((b) => `Bearer ${b}`),
            undefined,
            '',
            'Bearer',
            'Bearer ',
            `bearer ${key}`,
            `Bearer  ${key}  `,
            `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
            `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`,
            `Bearer ${limitedKey}`,
            `Bearer ${key}, Bearer ${key}`,
            `Token ${key}`,
            'Bearer hjk_',
            `Bearer ${'A'.repeat(5000)}`,
            'Bearer é',
            'Bearer ===',
          ),
        },
      ),
    }
    // Batch items are untyped in the route schema; their near-valid form is a PunchInput.
    ctx.hints.punches = fc.array(valueArbitrary(PunchInputSchema as JsonSchema, ctx), {
      minLength: 1,
      maxLength: 8,
    })
    oauthCtx = oauth.context(ctx)
    operations = (await cloud.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths
  }, SETUP_TIMEOUT_MS)

  function operationOf(route: RouteRecord): OpenApiOperation | undefined {
    return operations[route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')]?.[route.method.toLowerCase()]
  }

  /** The response validator for a route's success status, compiled from its OpenAPI document. */
  function responseCheck(route: RouteRecord, status: number): (value: unknown) => boolean {
    const id = `${route.method} ${route.url} ${status}`
    let check = responseChecks.get(id)
    if (!check) {
      const schema = operationOf(route)?.responses?.[String(status)]?.content?.['application/json']?.schema
      if (!schema) throw new Error(`${id}: a ${status} that the route does not document`)
      check = validatorCompiler({ schema, httpPart: 'body' }) as (value: unknown) => boolean
      responseChecks.set(id, check)
    }
    return check
  }

  function expectWellFormed(route: RouteRecord, req: FuzzRequest, res: LightMyRequestResponse): void {
    const status = res.statusCode
    const counts = seen.get(`${route.method} ${route.url}`) ?? new Map<number, number>()
    counts.set(status, (counts.get(status) ?? 0) + 1)
    seen.set(`${route.method} ${route.url}`, counts)

    expect(status, `${res.body.slice(0, 500)}`).toBeGreaterThanOrEqual(200)
    expect(status, `never a 5xx: ${res.body.slice(0, 500)}`).toBeLessThan(500)
    expect(status < 300 || status >= 400, 'no redirect, no other 3xx').toBe(true)
    const requestId = res.headers['x-request-id']
    expect(typeof requestId, `X-Request-Id on every response: ${res.body.slice(0, 300)}`).toBe('string')
    expect(requestId).toMatch(/^[A-Za-z0-9._:-]{8,128}$/)
    // The request's id is echoed in problems (`instance`), and a caller chooses its own: text it sent,
    // such as `.ts:0`, is not something of ours leaking.
    const body = res.body.split(String(requestId)).join('')
    for (const leak of LEAKS) expect(body, `nothing internal in the body (${leak})`).not.toMatch(leak)
    for (const secret of secrets) {
      expect(res.body.includes(secret), `no credential echoed: ${res.body.slice(0, 300)}`).toBe(false)
    }
    const contentType = String(res.headers['content-type'] ?? '')
    if (isOAuthRoute(route)) oauthChecks.expectNoStore(res)

    if (status === 204) {
      expect(res.body, 'a 204 has no body').toBe('')
      return
    }
    if (status < 300) {
      // Valid by chance: the documented success body of the route it reached.
      const reached = matchRoute(req.method, req.url)
      expect(reached, `a ${status} from a route that is not in the route table`).toBeDefined()
      if (contentType.startsWith('text/csv')) {
        // The payroll export: a documented CSV answer, its header first, every line CRLF-ended (RFC 4180 §2).
        const documented = operationOf(reached as RouteRecord)?.responses?.[String(status)]?.content
        expect(documented?.['text/csv'], `a ${status} CSV that the route does not document`).toBeDefined()
        expect(res.body.startsWith(`${ATTENDANCE_CSV_COLUMNS.join(',')}\r\n`), res.body.slice(0, 300)).toBe(
          true,
        )
        expect(res.body.split('\r\n').at(-1), 'the last line ends with CRLF').toBe('')
        return
      }
      expect(contentType).toMatch(/^application\/json/)
      const body: unknown = res.json()
      const check = responseCheck(reached as RouteRecord, status)
      expect(check(body), `a ${status} body that breaks its schema: ${res.body.slice(0, 500)}`).toBe(true)
      if (isOAuthRoute(route)) oauthChecks.expectSuccess(route, body as Record<string, unknown>)
      return
    }

    // OAuth errors are RFC 6749 §5.2 JSON, with the RFC 9457 members beside.
    if (isOAuthRoute(route)) {
      oauthChecks.expectError(route, req, res)
      return
    }
    expect(contentType, 'an error is a problem').toMatch(/^application\/problem\+json/)
    const problem = JSON.parse(res.body) as Record<string, unknown>
    const checked = checkProblem(problem)
    expect(checked.ok ? [] : checked.errors, 'the body is an RFC 9457 problem').toEqual([])
    expect(problem.status, 'problem status is the HTTP status').toBe(status)
    expect(problem.code).toMatch(/^[a-z][a-z0-9_]*$/)
    expect(Object.keys(PROBLEM_CATALOG), 'a stable code from the catalog').toContain(problem.code)
    expect(problem.type).toBe(`urn:hajri:problem:${String(problem.code)}`)
    expect(problem.title).toBe(PROBLEM_CATALOG[problem.code as ProblemCode].title)
    expect(problem.instance, 'the instance names the request').toBe(`urn:hajri:request:${String(requestId)}`)
    if (status === 401) {
      // The session routes take the cookie alone, and name its scheme (session-guard.ts).
      const scheme = isSessionRoute(route) ? /^Cookie / : /^Bearer /
      expect(res.headers['www-authenticate'], 'a 401 has a challenge').toMatch(scheme)
    }
  }

  it('fuzzes every route the app serves, and only documentation, the console files and HEAD twins are left out', () => {
    const served = cloud.app.routeTable.filter((r) => !isSkipped(r))
    expect(served).toEqual(FUZZED)
    expect(FUZZED.length).toBeGreaterThan(0)
    const skipped = cloud.app.routeTable.filter(isSkipped)
    for (const r of skipped) {
      const twin =
        r.method === 'HEAD' && cloud.app.routeTable.some((g) => g.method === 'GET' && g.url === r.url)
      expect(twin || isStatic(r.url), `${r.method} ${r.url}`).toBe(true)
    }
  })

  for (const route of FUZZED) {
    it(`${route.method} ${route.url}: ${RUNS} malformed requests get problems, never a 5xx`, async () => {
      const context = isOAuthRoute(route)
        ? oauthCtx
        : attendanceFuzz.contextFor(route, isConsoleRoute(route) ? consoleFuzz.contextFor(route, ctx) : ctx)
      const requests = isSessionRoute(route)
        ? sessionFuzz.requests(route, operationOf(route), ctx)
        : requestArbitrary(route, operationOf(route), context)
      await fc.assert(
        fc.asyncProperty(requests, async (req) => {
          const res = await withTimeout(cloud.app.inject(req), `${req.method} ${req.url.slice(0, 200)}`)
          expectWellFormed(route, req, res)
        }),
        { numRuns: RUNS, seed: SEED },
      )
      const counts = seen.get(`${route.method} ${route.url}`) ?? new Map<number, number>()
      const total = (from: number, to: number) =>
        [...counts].filter(([s]) => s >= from && s < to).reduce((n, [, c]) => n + c, 0)
      // A fuzz that never gets past validation, or never fails it, tests nothing.
      expect(total(200, 300), 'some requests reach the handler and succeed').toBeGreaterThan(0)
      if (route.scope !== undefined || isConsoleRoute(route)) {
        // A route that takes no input can only refuse the credential.
        const operation = operationOf(route)
        const takesInput = (operation?.parameters?.length ?? 0) > 0 || operation?.requestBody !== undefined
        if (takesInput) expect(total(400, 500), 'most requests are refused').toBeGreaterThan(RUNS / 4)
        expect(counts.get(401) ?? 0, 'some requests are unauthenticated').toBeGreaterThan(0)
      }
      if (isOAuthRoute(route)) oauthChecks.expectCoverage(route)
    }, 120_000)
  }

  it('kept every OAuth error_description to the characters RFC 6749 §5.2 allows', () => {
    // Collected over the OAuth routes above, so that each of them ran to the end.
    expect(oauthChecks.errors.size, 'the OAuth routes were fuzzed').toBeGreaterThan(0)
    expect([...oauthChecks.badDescriptions]).toEqual([])
  })

  for (const found of FOUND) {
    it(`found by fuzzing: ${found.title} is answered well formed, never a 5xx`, async () => {
      const req = found.request(key, consoleFuzz.adminToken)
      const route = matchRoute(req.method, req.url)
      expect(route, req.url).toBeDefined()
      const res = await withTimeout(cloud.app.inject(req), req.url)
      // A hand-made cursor may fairly answer 200 (it only moves within the tenant's own data).
      expectWellFormed(route as RouteRecord, req, res)
    })
  }

  it('stored no malformed punch', async () => {
    const finishedAt = nowMicros()
    const rows = await cloud.database.db
      .selectFrom('punches')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .execute()
    const employees = await cloud.database.db
      .selectFrom('employees')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .execute()
    const activeIds = new Map(
      employees.filter((e) => e.status === 'ACTIVE').map((e) => [e.employee_code, e.id]),
    )
    // More than the seeded punches: the write routes did store something, so this check can fail.
    expect(rows.length).toBeGreaterThan(ACTIVE_CODES.length * 2)
    expect(employees).toHaveLength(ACTIVE_CODES.length + INACTIVE_CODES.length)
    for (const row of rows) {
      const where = `punch ${row.id}`
      expect(activeIds.get(row.employee_code), `${where}: employee ${row.employee_code}`).toBe(
        row.employee_id,
      )
      expect(['IN', 'OUT'], where).toContain(row.punch_type)
      expect(Number.isSafeInteger(row.punched_at), where).toBe(true)
      expect(row.punched_at, where).toBeGreaterThanOrEqual(startedAt - 90 * DAY - 60 * SECOND)
      expect(row.punched_at, where).toBeLessThanOrEqual(finishedAt + 300 * SECOND)
      expect(row.received_at, where).toBeGreaterThanOrEqual(startedAt - SECOND)
      expect(row.received_at, where).toBeLessThanOrEqual(finishedAt)
      for (const text of [row.device_id, row.source])
        if (text !== null) expect(text, where).toMatch(DEVICE_TEXT)
      if (row.external_id !== null) expect(row.external_id, where).toMatch(/^[\x21-\x7E]{1,128}$/)
    }
    // And as a client reads them back: every punch, each one a valid Punch with parseable times.
    const listed: Record<string, unknown>[] = []
    let url: string | undefined = '/api/public/v1/attendance/punches?limit=200'
    while (url) {
      const res = await cloud.app.inject({ method: 'GET', url, headers: bearer(key) })
      expect(res.statusCode).toBe(200)
      const page = res.json() as { data: Record<string, unknown>[]; nextCursor: string | null }
      listed.push(...page.data)
      url = page.nextCursor
        ? `/api/public/v1/attendance/punches?limit=200&cursor=${page.nextCursor}`
        : undefined
    }
    expect(listed).toHaveLength(rows.length)
    for (const punch of listed) {
      const checked = checkPunch(punch)
      expect(checked.ok ? [] : checked.errors, String(punch.id)).toEqual([])
      expect(parseTimestamp(String(punch.punchedAt)), String(punch.id)).toBeDefined()
      expect(parseTimestamp(String(punch.receivedAt)), String(punch.id)).toBeDefined()
    }
  })
}
