/**
 * OWASP API1:2023 Broken Object Level Authorization: a cross-tenant matrix over every
 * route. Every route of the app's own route table is tried with tenant B's credentials (API key
 * and OAuth token on the public API, admin token and console session on the console API,
 * B's own session and OAuth client elsewhere) against tenant A's objects: each of A's objects is a
 * 404, no answer shows any of A's ids, codes, emails or URLs, and not one of A's rows changes. A
 * route added later fails "classifies every route" until it is given its place here.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { bearer, describeEachDatabase, type TestCloud } from '../../support/cloud-harness.js'
import { someAddress } from '../features/sessions/session-kit.js'
import { type OpenApiDocument, openApiOf, operationOf, queryParameters } from './openapi-walk.js'
import {
  appRouteTable,
  type Body,
  bodyFor,
  type Caller,
  CONSOLE,
  callersOf,
  codeOf,
  createTenantFixture,
  type Family,
  familyOf,
  fillPath,
  finishRecomputeJobs,
  OAUTH,
  OBJECT_PARAMS,
  objectParamOf,
  objectValues,
  ownRequest,
  PUBLIC,
  pathParams,
  plan,
  REQUIRED_QUERIES,
  routeKey,
  send,
  type TenantFixture,
  WILDCARDS,
  withQuery,
} from './security-kit.js'
import { leakedMarkers, markersOf, type TenantRows, tenantRows } from './tenant-rows.js'

const ROUTES = await appRouteTable()

/** Public API and console API routes without an object in their path: what B's attempt is. */
type Paramless =
  | {
      kind: 'list'
      /**
       * The problem a query naming an object B does not have (one of A's) is answered with, when
       * it is not an empty list: it must be B's answer for a value that names nothing anywhere.
       */
      unknownReference?: { status: number; code: string }
    }
  | {
      kind: 'create'
      /** B's body; by default the kit's valid body for B. */
      body?: (a: TenantFixture, b: TenantFixture) => Body
      /** What must come of it; by default any 2xx, in B's own tenant. */
      expect?: (res: LightMyRequestResponse, label: string) => void
      /** Values of A's that B now has too, of its own (an employee code): no longer a sign of A's data. */
      shared?: (a: TenantFixture) => string[]
      /** Done before each of B's requests. */
      prepare?: (cloud: TestCloud) => Promise<void>
    }

const LIST: Paramless = { kind: 'list' }
const CREATE: Paramless = { kind: 'create' }

const PARAMLESS: Record<string, Paramless> = {
  [`GET ${PUBLIC}/employees`]: LIST,
  [`GET ${PUBLIC}/attendance/punches`]: LIST,
  // A punch for A's employee, by B: A's employee is not found in B's directory.
  [`POST ${PUBLIC}/attendance/punches`]: {
    kind: 'create',
    body: (a) => ({ json: { employeeCode: a.objects.employeeCode, punchType: 'IN' } }),
    expect: (res, label) => {
      expect(res.statusCode, `${label}: ${res.body}`).toBe(422)
      expect(codeOf(res), label).toBe('employee_not_found')
    },
  },
  [`POST ${PUBLIC}/attendance/punches/batch`]: {
    kind: 'create',
    body: (a) => ({ json: { punches: [{ employeeCode: a.objects.employeeCode, punchType: 'IN' }] } }),
    expect: (res, label) => {
      expect(res.statusCode, `${label}: ${res.body}`).toBe(200)
      expect(res.json().results[0]?.problem?.code, label).toBe('employee_not_found')
    },
  },
  [`GET ${CONSOLE}/webhooks`]: LIST,
  [`POST ${CONSOLE}/webhooks`]: CREATE,
  [`GET ${CONSOLE}/webhook-deliveries`]: LIST,
  [`GET ${CONSOLE}/api-keys`]: LIST,
  [`POST ${CONSOLE}/api-keys`]: CREATE,
  [`GET ${CONSOLE}/oauth-apps`]: LIST,
  [`POST ${CONSOLE}/oauth-apps`]: CREATE,
  [`GET ${CONSOLE}/employees`]: LIST,
  // A's employee code imported by B: B's own employee; A's is untouched (the rows compared at the end).
  [`POST ${CONSOLE}/employees/import`]: {
    kind: 'create',
    body: (a) => ({
      text: `employeeCode,name\n${a.objects.employeeCode},Taken by B\n`,
      contentType: 'text/csv',
    }),
    shared: (a) => [a.objects.employeeCode],
  },
  [`GET ${CONSOLE}/audit`]: LIST,
  [`GET ${CONSOLE}/dashboard/punches-per-hour`]: LIST,
  [`GET ${CONSOLE}/dashboard/webhook-deliveries`]: LIST,
  [`GET ${CONSOLE}/users`]: LIST,
  [`POST ${CONSOLE}/users`]: CREATE,
}

/** Attendance, the same in both APIs: B's attempts at A's days, shifts, corrections and jobs. */
for (const api of [PUBLIC, CONSOLE]) {
  const A = `${api}/attendance`
  const entries: Record<string, Paramless> = {
    [`GET ${A}/days`]: LIST,
    [`GET ${A}/days.csv`]: LIST,
    // Totals of A's employee for B: no such employee in B, as for a code no tenant has.
    [`GET ${A}/summaries`]: {
      kind: 'list',
      unknownReference: { status: 404, code: 'employee_not_found' },
    },
    [`GET ${A}/corrections`]: LIST,
    [`GET ${A}/shifts`]: LIST,
    [`POST ${A}/shifts`]: CREATE,
    [`GET ${A}/policies`]: LIST,
    [`POST ${A}/policies`]: CREATE,
    [`GET ${A}/assignments`]: LIST,
    // A's shift assigned by B: no such shift in B.
    [`POST ${A}/assignments`]: {
      kind: 'create',
      body: (a) => ({ json: { shiftCode: a.objects.shiftCode, effectiveFrom: a.dates.past } }),
      expect: (res, label) => {
        expect(res.statusCode, `${label}: ${res.body}`).toBe(404)
        expect(codeOf(res), label).toBe('shift_not_found')
      },
    },
    [`GET ${A}/holidays`]: LIST,
    [`POST ${A}/holidays`]: CREATE,
    // A recompute of A's employee over A's final days, by B: a job of B's, run to its end before
    // the next, that finds no such employee in B (A's rows are compared at the end).
    [`POST ${A}/recompute`]: {
      kind: 'create',
      body: (a) => ({
        json: { from: a.dates.from, to: a.dates.to, employeeCodes: [a.objects.employeeCode] },
      }),
      expect: (res, label) => {
        expect(res.statusCode, `${label}: ${res.body}`).toBe(202)
        expect(res.json(), label).toMatchObject({ status: 'queued', employees: 1, employeesDone: 0 })
      },
      prepare: finishRecomputeJobs,
    },
    // B locks the period of A's final days: B's own days, never A's (compared at the end).
    [`POST ${A}/lock`]: {
      kind: 'create',
      body: (a) => ({ json: { from: a.dates.past, to: a.dates.past } }),
    },
  }
  Object.assign(PARAMLESS, entries)
}
// A manual punch for A's employee, by B: A's employee is not found in B's directory. (Not A's first
// employee: B's import above made one of its own with that code.)
PARAMLESS[`POST ${CONSOLE}/attendance/punches`] = {
  kind: 'create',
  body: (a) => ({
    json: {
      employeeCode: `${a.tag}-E2`,
      punchType: 'IN',
      punchedAt: `${a.dates.past}T10:00:00+05:30`,
      source: 'manual',
      reason: 'B at A',
    },
  }),
  expect: (res, label) => {
    expect(res.statusCode, `${label}: ${res.body}`).toBe(422)
    expect(codeOf(res), label).toBe('employee_not_found')
  },
}

/** HEAD is the twin of a GET, and is tried the same way. */
const paramlessOf = (route: RouteRecord): Paramless | undefined =>
  PARAMLESS[routeKey(route)] ?? (route.method === 'HEAD' ? PARAMLESS[`GET ${route.url}`] : undefined)

/** Query parameters that name an object: set to A's, they must find nothing of A's for B. */
const QUERY_REFERENCES: Record<string, (a: TenantFixture) => string[]> = {
  employeeCode: (a) => [a.objects.employeeCode],
  endpointId: (a) => [a.objects.endpointId],
  search: (a) => [a.objects.employeeCode, a.tag.toLowerCase(), a.owner.email],
  targetId: (a) => [a.objects.keyId, a.objects.appId, a.objects.endpointId, a.objects.userId, a.client.appId],
  actor: (a) => [
    `admin_token:${a.adminTokenId}`,
    `console_user:${a.owner.id}`,
    `oauth_app:${a.client.appId}`,
  ],
}
/** Query parameters that name no object (cursor is tried with A's own cursor, below). */
const QUERY_FILTERS = new Set([
  'limit',
  'status',
  'from',
  'to',
  'updatedSince',
  'hours',
  'days',
  'action',
  'targetType',
  'eventType',
  'state',
])

/** Families that hold no tenant's objects, and why: B's anonymous requests there must show none of A's. */
const WITHOUT_TENANT_OBJECTS: Partial<Record<Family, string>> = {
  catalog: 'the webhook event catalog, the same for every tenant',
  operations: 'liveness, readiness and the OAuth server metadata, the same for every tenant',
  docs: 'the OpenAPI document and its viewer',
  static: "the console's files",
}

/** The session routes act on the caller's own session; the OAuth routes on the caller's own client. */
const OWN_ONLY = new Set([
  `POST ${CONSOLE}/session`,
  `GET ${CONSOLE}/session`,
  `HEAD ${CONSOLE}/session`,
  `DELETE ${CONSOLE}/session`,
  `POST ${CONSOLE}/session/password`,
  `POST ${OAUTH}/token`,
  `POST ${OAUTH}/revoke`,
  `POST ${OAUTH}/introspect`,
])

function classify(route: RouteRecord, spec: OpenApiDocument): string {
  const family = familyOf(route)
  const key = routeKey(route)
  if (family === 'public' || family === 'console') {
    const params = pathParams(route.url)
    const unknown = params.filter((p) => !objectParamOf(route.url, p))
    if (unknown.length > 0) return `${key}: add :${unknown.join(', :')} to OBJECT_PARAMS`
    if (params.length === 0 && !paramlessOf(route)) return `${key}: add it to PARAMLESS`
    for (const q of queryParameters(operationOf(spec, route))) {
      if (q.name !== 'cursor' && !(q.name in QUERY_REFERENCES) && !QUERY_FILTERS.has(q.name))
        return `${key}: classify its query parameter ${q.name}`
    }
    return ''
  }
  if (family === 'session' || family === 'oauth') return OWN_ONLY.has(key) ? '' : `${key}: add it to OWN_ONLY`
  if (route.method !== 'GET' && route.method !== 'HEAD')
    return `${key}: a ${family} route that changes something`
  return WITHOUT_TENANT_OBJECTS[family] ? '' : `${key}: say why ${family} holds no tenant's objects`
}

describeEachDatabase('OWASP API1: tenant B against tenant A on every route', (cloud) => {
  let a: TenantFixture
  let b: TenantFixture
  let spec: OpenApiDocument
  let before: TenantRows
  let markers: Set<string>
  /** A's own cursor for each listing that pages, taken before A's rows are read. */
  const cursorsOfA = new Map<string, string>()

  beforeAll(async () => {
    a = await createTenantFixture(cloud)
    b = await createTenantFixture(cloud)
    spec = await openApiOf(cloud.app)
    for (const route of cloud.app.routeTable) {
      const family = familyOf(route)
      if (route.method !== 'GET' || (family !== 'public' && family !== 'console')) continue
      if (!queryParameters(operationOf(spec, route)).some((q) => q.name === 'cursor')) continue
      // A's OAuth token and admin token: neither is touched by its use, so A's rows stay as read below.
      const caller: Caller =
        family === 'public'
          ? { kind: 'oauth_token', token: a.oauthToken }
          : { kind: 'admin_token', token: a.adminToken }
      const url = withQuery(route.url, { ...REQUIRED_QUERIES[route.url]?.(a), limit: '1' })
      const res = await send(cloud, plan(route, url, caller, undefined))
      expect(res.statusCode, `${routeKey(route)}: ${res.body}`).toBe(200)
      const cursor = res.json().nextCursor
      expect(cursor, `A needs two of what ${route.url} lists`).toEqual(expect.any(String))
      cursorsOfA.set(route.url, cursor)
    }
    before = await tenantRows(cloud, a.id)
    markers = markersOf(before, a.id)
    expect(markers.size).toBeGreaterThan(20)
  }, 120_000)

  /** Answers checked for A's data, by family: reported, and each family must have had many. */
  const checked: Record<string, number> = {}
  let family = ''
  const expectNoLeak = (res: LightMyRequestResponse, sent: string, label: string) => {
    checked[family] = (checked[family] ?? 0) + 1
    expect(leakedMarkers(markers, res, sent), `${label} shows A's data`).toEqual([])
  }

  it('classifies every route of the app', () => {
    expect(cloud.app.routeTable.map(routeKey).sort()).toEqual(ROUTES.map(routeKey).sort())
    const unclassified = ROUTES.map((route) => classify(route, spec)).filter((problem) => problem !== '')
    expect(unclassified).toEqual([])
    for (const route of ROUTES) {
      // The session routes and token revocation are given their bodies by ownRequest (security-kit.ts).
      const ownBody = familyOf(route) === 'session' || routeKey(route) === `POST ${OAUTH}/revoke`
      if (operationOf(spec, route)?.requestBody && !ownBody && !bodyFor(route, a, cloud))
        expect.fail(`${routeKey(route)} takes a body: give a valid one in BODIES (security-kit.ts)`)
    }
  })

  async function tryObjectRoute(route: RouteRecord, family: Family) {
    const values = objectValues(route.url, a.objects)
    const codes = pathParams(route.url).map(
      (p) => OBJECT_PARAMS[objectParamOf(route.url, p) as keyof typeof OBJECT_PARAMS] as string,
    )
    for (const caller of callersOf(family, b)) {
      const planned = plan(route, fillPath(route.url, values), caller, bodyFor(route, b, cloud, values))
      const res = await send(cloud, planned)
      const label = `${routeKey(route)} by B's ${caller.kind}`
      expect(res.statusCode, `${label}: ${res.body}`).toBe(404)
      if (route.method !== 'HEAD') expect(codes, label).toContain(codeOf(res))
      expectNoLeak(res, planned.sent, label)
    }
  }

  async function tryList(route: RouteRecord, family: Family, entry: Extract<Paramless, { kind: 'list' }>) {
    // A's period, where a route requires one: where A's data would be, if B could see it.
    const required = REQUIRED_QUERIES[route.url]?.(a) ?? {}
    const queries: { name?: string; value?: string }[] = [{}]
    for (const q of queryParameters(operationOf(spec, route))) {
      const references = QUERY_REFERENCES[q.name]
      if (references) for (const value of references(a)) queries.push({ name: q.name, value })
      if (q.name === 'cursor' && route.method === 'GET') {
        queries.push({ name: 'cursor', value: cursorsOfA.get(route.url) })
      }
    }
    for (const { name, value } of queries) {
      const url = withQuery(route.url, name ? { ...required, [name]: value as string } : required)
      for (const caller of callersOf(family, b)) {
        const planned = plan(route, url, caller, undefined)
        const res = await send(cloud, planned)
        const label = `${routeKey(route)} ${url.split('?')[1] ?? ''} by B's ${caller.kind}`
        const unknown = entry.unknownReference
        // A's cursor may be refused as not B's; it must never show A's data.
        if (name === 'cursor' && res.statusCode === 400) expect(codeOf(res), label).toBe('invalid_cursor')
        else if (name !== undefined && name !== 'cursor' && unknown && res.statusCode !== 200) {
          expect(res.statusCode, `${label}: ${res.body}`).toBe(unknown.status)
          if (route.method !== 'HEAD') expect(codeOf(res), label).toBe(unknown.code)
          // Just as for a value that names nothing in any tenant: B learns nothing of A.
          const nowhere = plan(route, withQuery(url, { [name]: 'NOWHERE-0' }), caller, undefined)
          const control = await send(cloud, nowhere)
          expect([control.statusCode, codeOf(control)], label).toEqual([res.statusCode, codeOf(res)])
        } else expect(res.statusCode, `${label}: ${res.body}`).toBe(200)
        expectNoLeak(res, planned.sent, label)
      }
    }
  }

  async function tryCreate(
    route: RouteRecord,
    family: Family,
    entry: Extract<Paramless, { kind: 'create' }>,
  ) {
    for (const caller of callersOf(family, b)) {
      await entry.prepare?.(cloud)
      const body = entry.body?.(a, b) ?? bodyFor(route, b, cloud)
      const planned = plan(route, route.url, caller, body)
      const res = await send(cloud, planned)
      const label = `${routeKey(route)} by B's ${caller.kind}`
      if (entry.expect) entry.expect(res, label)
      else expect(res.statusCode, `${label}: ${res.body}`).toBeLessThan(300)
      expectNoLeak(res, planned.sent, label)
    }
    for (const value of entry.shared?.(a) ?? []) markers.delete(value)
  }

  for (const tried of ['public', 'console'] as const) {
    it(`refuses every ${tried} route B's credentials on A's objects, and shows B none of A's data`, async () => {
      family = tried
      const routes = cloud.app.routeTable.filter((r) => familyOf(r) === tried)
      expect(routes.length).toBeGreaterThan(family === 'public' ? 8 : 30)
      for (const route of routes) {
        const entry = paramlessOf(route)
        if (pathParams(route.url).length > 0) await tryObjectRoute(route, tried)
        else if (entry?.kind === 'list') await tryList(route, tried, entry)
        else if (entry?.kind === 'create') await tryCreate(route, tried, entry)
        else expect.fail(`${routeKey(route)} is not classified`)
      }
      expect(checked[tried]).toBeGreaterThan(routes.length * 2 - 1)
      process.stdout.write(`API1 ${tried}: ${routes.length} routes, ${checked[tried]} answers to B checked\n`)
    }, 180_000)
  }

  it("lets B's session act on B's own session only, and B's OAuth client on its own tokens only", async () => {
    family = 'session and OAuth'
    for (const route of cloud.app.routeTable.filter((r) => familyOf(r) === 'session')) {
      const planned = await ownRequest(cloud, route, b)
      const res = await send(cloud, planned)
      const label = `${routeKey(route)} by B`
      expect(res.statusCode, `${label}: ${res.body}`).toBeLessThan(300)
      if (res.body !== '') expect(res.json().tenant?.id ?? b.id, label).toBe(b.id)
      expectNoLeak(res, planned.sent, label)
    }

    const form = (fields: Record<string, string>): Body => ({
      text: new URLSearchParams(fields).toString(),
      contentType: 'application/x-www-form-urlencoded',
    })
    const own = { client_id: b.client.clientId, client_secret: b.client.clientSecret }
    const oauth = (path: string, fields: Record<string, string>) =>
      send(cloud, plan({ method: 'POST' }, `${OAUTH}${path}`, { kind: 'anonymous' }, form(fields)))
    // B's token is B's: it lists B's employees, none of A's.
    const issued = await oauth('/token', { grant_type: 'client_credentials', ...own })
    expect(issued.statusCode, issued.body).toBe(200)
    const listed = await cloud.app.inject({
      method: 'GET',
      url: `${PUBLIC}/employees?limit=200`,
      headers: bearer(issued.json().access_token),
    })
    expect(listed.statusCode).toBe(200)
    expectNoLeak(listed, '', "B's new token")
    // A's client id with B's secret is no client at all.
    const crossed = await oauth('/token', {
      grant_type: 'client_credentials',
      client_id: a.client.clientId,
      client_secret: b.client.clientSecret,
    })
    expect(crossed.statusCode).toBe(401)
    expect(crossed.json().error).toBe('invalid_client')
    // RFC 7009 §2.1 and RFC 7662 §2.1: a client may revoke or inspect only its own tokens.
    const revoke = await oauth('/revoke', { token: a.oauthToken, ...own })
    expect(revoke.statusCode, revoke.body).toBe(400)
    expect(revoke.json().error).toBe('unauthorized_client')
    const introspect = await oauth('/introspect', { token: a.oauthToken, ...own })
    expect(introspect.statusCode).toBe(200)
    expect(introspect.json()).toEqual({ active: false })
    for (const res of [revoke, introspect, crossed])
      expectNoLeak(res, a.oauthToken + a.client.clientId, 'OAuth')
  })

  it("shows none of A's data on the routes that hold no tenant's objects", async () => {
    family = 'without objects'
    const routes = cloud.app.routeTable.filter((r) => WITHOUT_TENANT_OBJECTS[familyOf(r)] !== undefined)
    expect(routes.length).toBeGreaterThan(5)
    for (const route of routes) {
      const url = fillPath(route.url, { '*': WILDCARDS[route.url] ?? 'index.html' })
      const planned = plan(route, url, { kind: 'anonymous' }, undefined)
      const res = await send(cloud, planned)
      expect(res.statusCode, `${routeKey(route)}: ${res.body.slice(0, 200)}`).toBeLessThan(500)
      expectNoLeak(res, planned.sent, routeKey(route))
    }
  })

  it("leaves every one of A's rows as it was, and A's credentials working", async () => {
    // B's recompute jobs, of A's employee over A's days, run to their end first.
    await finishRecomputeJobs(cloud)
    expect(await tenantRows(cloud, a.id)).toEqual(before)
    // A's email with B's owner's password: no session of A's. A hears of it (its audit log), by design.
    const signIn = plan(
      { method: 'POST' },
      `${CONSOLE}/session`,
      { kind: 'anonymous' },
      { json: { email: a.owner.email, password: b.owner.password } },
      { remoteAddress: someAddress() },
    )
    const refused = await send(cloud, signIn)
    expect(refused.statusCode).toBe(401)
    expect(codeOf(refused)).toBe('invalid_credentials')
    expectNoLeak(refused, signIn.sent, 'sign-in as A')
    const after = await tenantRows(cloud, a.id)
    const added = (after.audit_log ?? []).filter(
      (row) => !(before.audit_log ?? []).some((old) => old.id === row.id),
    )
    expect(added.map((row) => [row.action, row.actor])).toEqual([
      ['console_user.sign_in_failed', 'anonymous'],
    ])
    expect({ ...after, audit_log: before.audit_log }).toEqual(before)
    for (const token of [a.oauthToken, a.apiKey]) {
      const res = await cloud.app.inject({
        method: 'GET',
        url: `${PUBLIC}/employees`,
        headers: bearer(token),
      })
      expect(res.statusCode).toBe(200)
      expect(res.json().data.map((e: { employeeCode: string }) => e.employeeCode)).toContain(
        a.objects.employeeCode,
      )
    }
    const res = await cloud.app.inject({
      method: 'GET',
      url: `${CONSOLE}/webhooks/${a.objects.endpointId}`,
      headers: bearer(a.adminToken),
    })
    expect(res.statusCode).toBe(200)
  })
})
