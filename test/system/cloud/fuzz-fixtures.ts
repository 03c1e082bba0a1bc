/**
 * The fixtures and request generators of the route fuzz, for fuzz tests beside
 * test/system/cloud/fuzz.test.ts: the routes from the app's own route table, a tenant with employees,
 * punches and cursors, keys good and bad, and the OAuth, console and session contexts. They are
 * built as fuzz.test.ts builds its own, so the requests are the same kind: near-valid, then broken.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { openDatabase } from '../../../cloud/db/database.js'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { PunchInputSchema } from '../../../shared/punch.js'
import { formatTimestamp, nowMicros } from '../../../shared/time.js'
import { isOAuthRoute, setUpOAuthFuzz } from '../../cloud/features/oauth/oauth-fuzz.js'
import {
  isSessionRoute,
  type SessionFuzzFixtures,
  setUpSessionFuzz,
} from '../../cloud/features/sessions/session-fuzz.js'
import { bearer, employee, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import {
  type FuzzContext,
  type FuzzRequest,
  type JsonSchema,
  type OpenApiOperation,
  requestArbitrary,
  valueArbitrary,
} from '../../support/request-arbitrary.js'
import { type ConsoleFuzzFixtures, isConsoleRoute, setUpConsoleFuzz } from './console-fuzz.js'

export const SECOND = 1_000_000
export const DAY = 86_400 * SECOND
export const ACTIVE_CODES = ['E001', 'E002', 'e.003', 'A-9_z']
export const INACTIVE_CODES = ['E050', 'E051']

/** Documentation, the console's static files and Fastify's HEAD twins take no input worth fuzzing. */
export function isStaticRoute(route: { method: string; url: string }): boolean {
  const url = route.url
  return (
    route.method === 'HEAD' ||
    url === '/openapi.json' ||
    url === '/docs' ||
    url.startsWith('/docs/') ||
    url === '/console' ||
    url.startsWith('/console/')
  )
}

/** Every route the app serves but the static ones, from a throwaway app over an in-memory database. */
export async function fuzzedRoutes(): Promise<RouteRecord[]> {
  const app = await buildApp({
    config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
    database: openDatabase('sqlite::memory:'),
    logger: false,
  })
  await app.ready()
  const routes = app.routeTable.filter((r) => !isStaticRoute(r))
  await app.close()
  return routes
}

/** Rejects when no answer comes within `ms`: a hung handler is a failure, not a stuck test. */
export function withTimeout<T>(work: Promise<T>, ms: number, label: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no response in ${ms} ms (a hung handler): ${label}`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

export interface FuzzFixtures {
  tenantId: string
  key: string
  startedAt: number
  consoleFuzz: ConsoleFuzzFixtures
  sessionFuzz: SessionFuzzFixtures
  operationOf(route: RouteRecord): OpenApiOperation | undefined
  /** Requests for one route, with the context its kind needs. */
  requests(route: RouteRecord): fc.Arbitrary<FuzzRequest>
}

export async function setUpFuzzFixtures(cloud: TestCloud): Promise<FuzzFixtures> {
  const startedAt = nowMicros()
  const tenantId = await cloud.createTenant()
  await cloud.upsertEmployees(tenantId, [
    ...ACTIVE_CODES.map((code) => employee(code)),
    employee('E050', { status: 'INACTIVE' }),
    employee('E051', { status: 'TERMINATED' }),
  ])
  const keys = cloud.services.apiKeys
  const key = (
    await keys.create(
      tenantId,
      { scopes: ['employees:read', 'attendance:read', 'attendance:write'], rateLimitPerMinute: 100_000 },
      TEST_ACTOR,
    )
  ).key
  const limitedKey = (await keys.create(tenantId, { scopes: ['employees:read'] }, TEST_ACTOR)).key
  const oauth = await setUpOAuthFuzz(cloud, tenantId, key)
  const consoleFuzz = await setUpConsoleFuzz(cloud, tenantId)
  const sessionFuzz = await setUpSessionFuzz(cloud)

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
      expect(res.statusCode, res.body).toBe(201)
      punchIds.push(res.json().id)
    }
  }
  const cursors: string[] = []
  for (const url of [
    '/api/public/v1/employees?limit=1',
    '/api/public/v1/employees?limit=2&status=ACTIVE',
    '/api/public/v1/attendance/punches?limit=1',
    '/api/public/v1/attendance/punches?limit=1&employeeCode=E001',
  ]) {
    const cursor = (await cloud.app.inject({ method: 'GET', url, headers: bearer(key) })).json().nextCursor
    expect(typeof cursor).toBe('string')
    cursors.push(cursor)
  }
  const timestamp = fc
    .tuple(
      fc.integer({ min: -95 * 86_400, max: 600 }),
      fc.constantFrom(0, 330, -300, 345, 840, -720, 60),
      fc.constantFrom(0, 123_000, 123_456),
    )
    .map(([s, offset, fraction]) => formatTimestamp(startedAt + s * SECOND + fraction, offset))
  const codes = [...ACTIVE_CODES, ...INACTIVE_CODES, 'E999']
  const ctx: FuzzContext = {
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
      { weight: 80, arbitrary: fc.constant(`Bearer ${key}`) },
      { weight: 10, arbitrary: fc.constant(`Bearer ${oauth.accessToken}`) },
      {
        weight: 10,
        arbitrary: fc.constantFrom(
          ...oauth.refusedBearers.map((b) => `Bearer ${b}`),
          undefined,
          'Bearer',
          `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`,
          `Bearer ${limitedKey}`,
        ),
      },
    ),
  }
  ctx.hints.punches = fc.array(valueArbitrary(PunchInputSchema as JsonSchema, ctx), {
    minLength: 1,
    maxLength: 8,
  })
  const oauthCtx = oauth.context(ctx)
  const operations = (await cloud.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths as Record<
    string,
    Record<string, OpenApiOperation>
  >
  const operationOf = (route: RouteRecord) =>
    operations[route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')]?.[route.method.toLowerCase()]
  return {
    tenantId,
    key,
    startedAt,
    consoleFuzz,
    sessionFuzz,
    operationOf,
    requests(route) {
      if (isSessionRoute(route)) return sessionFuzz.requests(route, operationOf(route), ctx)
      const context = isOAuthRoute(route)
        ? oauthCtx
        : isConsoleRoute(route)
          ? consoleFuzz.contextFor(route, ctx)
          : ctx
      return requestArbitrary(route, operationOf(route), context)
    },
  }
}
