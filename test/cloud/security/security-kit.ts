/**
 * What the OWASP API Security Top 10 suite shares: the app's own route table sorted into
 * families, a tenant with one object of every kind and every kind of credential, and a valid request
 * for any route. Each test walks the route table, so a route added later is covered, or fails a test
 * until it is classified here.
 */
import { randomBytes } from 'node:crypto'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { openDatabase } from '../../../cloud/db/database.js'
import { AttendanceWorker } from '../../../cloud/features/attendance/attendance-worker.js'
import { addDays, localDate } from '../../../cloud/features/attendance/work-dates.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { SCOPES } from '../../../shared/scopes.js'
import { formatTimestamp } from '../../../shared/time.js'
import { bearer, employee, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import { makeFailedDeliveries } from '../../support/failed-deliveries.js'
import {
  activate,
  type Browser,
  newTenant,
  newUser,
  SESSION_COOKIE,
  signIn,
  someAddress,
  type TestUser,
  uniqueEmail,
} from '../features/sessions/session-kit.js'

export const PUBLIC = '/api/public/v1'
export const CONSOLE = '/api/console/v1'
export const OAUTH = '/api/oauth'

export const routeKey = (route: { method: string; url: string }) => `${route.method} ${route.url}`

/**
 * Who may call a route, and with what: `public` (an API key or an OAuth access token with the
 * route's scope), `console` (an admin token or a console session), `session` (the console's own
 * session routes: the cookie only), `oauth` (client credentials), `catalog` (the webhook event
 * catalog: anyone), `operations` (health and OAuth metadata: anyone), `docs` (the OpenAPI document
 * and its viewer) and `static` (the console's files).
 */
export type Family = 'public' | 'console' | 'session' | 'oauth' | 'catalog' | 'operations' | 'docs' | 'static'

export function familyOf(route: RouteRecord): Family {
  const { url } = route
  if (route.scope !== undefined) return 'public'
  if (route.access !== undefined) return 'console'
  if (route.anonymous) return 'catalog'
  if (url === `${CONSOLE}/session` || url.startsWith(`${CONSOLE}/session/`)) return 'session'
  if (url.startsWith(`${OAUTH}/`)) return 'oauth'
  if (['/healthz', '/readyz', '/.well-known/oauth-authorization-server'].includes(url)) return 'operations'
  if (url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/')) return 'docs'
  if (url === '/console' || url.startsWith('/console/')) return 'static'
  throw new Error(`${routeKey(route)} is in no family: classify it in test/cloud/security/security-kit.ts`)
}

/** The route table of a throwaway app (in-memory SQLite): known before any test runs, for test names. */
export async function appRouteTable(): Promise<RouteRecord[]> {
  const app = await buildApp({
    config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
    database: openDatabase('sqlite::memory:'),
    logger: false,
  })
  await app.ready()
  const routes = [...app.routeTable]
  await app.close()
  return routes
}

/** A tenant with one object of each kind, and a credential of each kind. */
export interface TenantFixture {
  id: string
  /** In this tenant's codes, emails and URLs, so that no two tenants' data look alike. */
  tag: string
  owner: TestUser
  /** The owner, signed in to the console. */
  session: Browser
  /** Every scope. */
  apiKey: string
  /**
   * Attendance dates in the tenant's zone: `past`, ten days back, has final days of both employees
   * (and a holiday three days before it); `today` has open ones. `from`..`to` holds them all.
   */
  dates: { past: string; today: string; from: string; to: string }
  adminToken: string
  adminTokenId: string
  /** An OAuth app with every scope, and an access token of it. */
  client: { appId: string; clientId: string; clientSecret: string }
  oauthToken: string
  /** Objects for the routes' path parameters; none of them is one of the credentials above. */
  objects: Record<ObjectParam, string>
}

/** Path parameters that name a tenant's object, and the problem code of one not found. */
export const OBJECT_PARAMS = {
  employeeCode: 'employee_not_found',
  punchId: 'punch_not_found',
  endpointId: 'webhook_endpoint_not_found',
  deliveryId: 'webhook_delivery_not_found',
  keyId: 'api_key_not_found',
  appId: 'oauth_app_not_found',
  userId: 'console_user_not_found',
  shiftCode: 'shift_not_found',
  policyId: 'attendance_policy_not_found',
  assignmentId: 'shift_assignment_not_found',
  holidayId: 'holiday_not_found',
  jobId: 'recompute_job_not_found',
  /** With :employeeCode, a day: the date of one of the employee's days. */
  workDate: 'attendance_day_not_found',
} as const

export type ObjectParam = keyof typeof OBJECT_PARAMS

export const isObjectParam = (name: string): name is ObjectParam => name in OBJECT_PARAMS

/** Path parameters whose name alone does not say what they name (`:id`, `:code`): by their collection. */
const PARAMS_IN_COLLECTIONS: Record<string, ObjectParam> = {
  '/attendance/shifts/:code': 'shiftCode',
  '/attendance/policies/:id': 'policyId',
  '/attendance/assignments/:id': 'assignmentId',
  '/attendance/holidays/:id': 'holidayId',
  '/attendance/jobs/:id': 'jobId',
}

/** The kind of object a route's path parameter names, or undefined for one not classified. */
export function objectParamOf(url: string, name: string): ObjectParam | undefined {
  for (const [collection, param] of Object.entries(PARAMS_IN_COLLECTIONS)) {
    if (collection.endsWith(`/:${name}`) && (url.endsWith(collection) || url.includes(`${collection}/`)))
      return param
  }
  return isObjectParam(name) ? name : undefined
}

export const pathParams = (url: string): string[] => [...url.matchAll(/:(\w+)/g)].map((m) => m[1] as string)

/** A tenant's own objects for a route's path parameters, by parameter name. */
export function objectValues(url: string, objects: Record<ObjectParam, string>): Record<string, string> {
  return Object.fromEntries(
    pathParams(url).map((name) => {
      const param = objectParamOf(url, name)
      if (!param) throw new Error(`:${name} of ${url} is not classified in OBJECT_PARAMS`)
      return [name, objects[param]]
    }),
  )
}

/**
 * Runs the tenants' queued and running recompute jobs to their end, and nothing else of the
 * attendance worker: a tenant may have only 3 at once, and the sweeps start many.
 */
export async function finishRecomputeJobs(cloud: TestCloud): Promise<void> {
  const services = cloud.services
  const worker = new AttendanceWorker({
    stores: services.stores,
    recomputer: services.recomputer,
    queue: services.attendanceQueue,
    outbox: services.outbox,
    log: { info: () => {}, warn: () => {}, error: (o: unknown) => console.error(o) } as never,
    now: cloud.now,
  })
  for (let i = 0; i < 1_000 && (await worker.advanceJob()); i++) {}
}

/** A unique attendance code or group name (a shift's code, a policy's or holiday's group). */
const uniqueCode = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex').toUpperCase()}`

/** An access token by client_secret_post (RFC 6749 §4.4.2), optionally for some of the app's scopes. */
export async function accessToken(
  cloud: TestCloud,
  clientId: string,
  clientSecret: string,
  scope?: string,
): Promise<string> {
  const res = await cloud.app.inject({
    method: 'POST',
    url: `${OAUTH}/token`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      ...(scope ? { scope } : {}),
    }).toString(),
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().access_token
}

/** A new object of the kind a path parameter names, for a request that changes or ends it. */
export async function freshObject(cloud: TestCloud, t: TenantFixture, param: ObjectParam): Promise<string> {
  const services = cloud.services
  switch (param) {
    case 'endpointId':
      return (
        await services.webhookEndpoints.create(
          t.id,
          {
            url: `https://hooks.example.com/${t.tag}/${randomBytes(3).toString('hex')}`,
            events: ['webhook.test'],
          },
          TEST_ACTOR,
        )
      ).endpoint.id
    case 'deliveryId': {
      const endpointId = await freshObject(cloud, t, 'endpointId')
      const [id] = await makeFailedDeliveries(cloud, t.id, [endpointId], 1)
      return id as string
    }
    case 'keyId':
      return (await services.apiKeys.create(t.id, { scopes: ['employees:read'] }, TEST_ACTOR)).id
    case 'appId':
      return (
        await services.oauthApps.create(
          t.id,
          { name: `app ${t.tag}`, scopes: ['employees:read'] },
          TEST_ACTOR,
        )
      ).id
    case 'userId':
      return (
        await services.consoleUsers.invite(
          t.id,
          { email: uniqueEmail(`viewer-${t.tag}`), role: 'viewer' },
          { role: 'owner', actor: TEST_ACTOR },
        )
      ).user.id
    case 'punchId': {
      const res = await cloud.app.inject({
        method: 'POST',
        url: `${PUBLIC}/attendance/punches`,
        headers: bearer(t.apiKey),
        payload: {
          employeeCode: t.objects.employeeCode,
          punchType: 'IN',
          punchedAt: `${t.dates.past}T13:00:00+05:30`,
          externalId: uniqueCode(`${t.tag}-fresh`),
        },
      })
      expect(res.statusCode, res.body).toBe(201)
      return res.json().id
    }
    // A shift no assignment uses, and a policy, an assignment and a holiday of a group no one is in.
    case 'shiftCode':
      return (
        await services.attendanceConfig.createShift(
          t.id,
          { code: uniqueCode('S'), start: '09:00', end: '17:00' },
          TEST_ACTOR,
        )
      ).code
    case 'policyId':
      return (
        await services.attendanceConfig.createPolicy(
          t.id,
          { group: uniqueCode('G'), fullDayMinutes: 420 },
          TEST_ACTOR,
        )
      ).id
    case 'assignmentId':
      return (
        await services.attendanceConfig.createAssignment(
          t.id,
          { group: uniqueCode('G'), shiftCode: t.objects.shiftCode, effectiveFrom: t.dates.past },
          TEST_ACTOR,
        )
      ).id
    case 'holidayId':
      return (
        await services.attendanceConfig.createHoliday(
          t.id,
          { date: t.dates.past, name: `Holiday ${t.tag}`, group: uniqueCode('G') },
          TEST_ACTOR,
        )
      ).id
    default:
      return t.objects[param]
  }
}

export async function createTenantFixture(cloud: TestCloud): Promise<TenantFixture> {
  const owner = await activate(cloud, await newTenant(cloud))
  const tenantId = owner.tenantId
  const tag = randomBytes(4).toString('hex').toUpperCase()
  const services = cloud.services
  const apiKey = await cloud.createApiKey(tenantId, [...SCOPES])
  const admin = await services.adminTokens.create(tenantId, { name: `security ${tag}` }, TEST_ACTOR)
  const app = await services.oauthApps.create(
    tenantId,
    { name: `security ${tag}`, scopes: [...SCOPES], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
    TEST_ACTOR,
  )
  const client = { appId: app.id, clientId: app.clientId, clientSecret: app.clientSecret }
  const codes = [`${tag}-E1`, `${tag}-E2`]
  await cloud.upsertEmployees(
    tenantId,
    codes.map((code) => employee(code, { name: `Employee ${code}` })),
  )
  const hour = 3_600_000_000
  const batch = await cloud.app.inject({
    method: 'POST',
    url: `${PUBLIC}/attendance/punches/batch`,
    headers: bearer(apiKey),
    payload: {
      punches: codes.map((code, i) => ({
        employeeCode: code,
        punchType: 'IN',
        punchedAt: formatTimestamp(cloud.now() - (i + 1) * hour),
        externalId: `${tag}-punch-${i}`,
      })),
    },
  })
  expect(batch.statusCode, batch.body).toBe(200)
  const [punch] = batch.json().results as { punch: { id: string } }[]
  const today = localDate(cloud.now(), 'Asia/Kolkata')
  const past = addDays(today, -10)
  const t: TenantFixture = {
    id: tenantId,
    tag,
    owner,
    session: await signIn(cloud, owner.email, owner.password),
    apiKey,
    dates: { past, today, from: addDays(past, -3), to: today },
    adminToken: admin.token,
    adminTokenId: admin.id,
    client,
    oauthToken: await accessToken(cloud, client.clientId, client.clientSecret),
    objects: {
      employeeCode: codes[0] as string,
      punchId: punch?.punch.id as string,
      endpointId: '',
      deliveryId: '',
      keyId: '',
      appId: '',
      userId: '',
      shiftCode: '',
      policyId: '',
      assignmentId: '',
      holidayId: '',
      jobId: '',
      workDate: past,
    },
  }
  await attendanceOf(cloud, t, codes)
  t.objects.endpointId = await freshObject(cloud, t, 'endpointId')
  const deliveries = await makeFailedDeliveries(cloud, tenantId, [t.objects.endpointId], 2)
  t.objects.deliveryId = deliveries[0] as string
  for (const param of ['keyId', 'appId', 'userId'] as const)
    t.objects[param] = await freshObject(cloud, t, param)
  return t
}

/**
 * The tenant's attendance, made through the public API: a shift assigned to everyone from before
 * `past`, the tenant's policy, a holiday, both employees' punches on `past` (final days), a manual
 * punch and a void (two corrections), the days the worker makes of them, and a finished recompute job.
 */
async function attendanceOf(cloud: TestCloud, t: TenantFixture, codes: string[]): Promise<void> {
  const { past } = t.dates
  const call = async (url: string, payload: object, status: number) => {
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${PUBLIC}/attendance${url}`,
      headers: bearer(t.apiKey),
      payload,
    })
    expect(res.statusCode, `${url}: ${res.body}`).toBe(status)
    return res.json()
  }
  t.objects.shiftCode = (
    await call('/shifts', { code: `GEN-${t.tag}`, start: '09:00', end: '18:00', unpaidBreakMinutes: 60 }, 201)
  ).code
  t.objects.assignmentId = (
    await call('/assignments', { shiftCode: t.objects.shiftCode, effectiveFrom: addDays(past, -5) }, 201)
  ).id
  t.objects.policyId = (await call('/policies', { fullDayMinutes: 480 }, 201)).id
  t.objects.holidayId = (
    await call('/holidays', { date: addDays(past, -3), name: `Holiday ${t.tag}` }, 201)
  ).id
  const punched = await call(
    '/punches/batch',
    {
      punches: codes.flatMap((code) => [
        {
          employeeCode: code,
          punchType: 'IN',
          punchedAt: `${past}T09:02:00+05:30`,
          externalId: `${code}-in`,
        },
        {
          employeeCode: code,
          punchType: 'OUT',
          punchedAt: `${past}T18:04:00+05:30`,
          externalId: `${code}-out`,
        },
      ]),
    },
    200,
  )
  await call(
    '/punches',
    {
      employeeCode: codes[1],
      punchType: 'OUT',
      punchedAt: `${past}T14:00:00+05:30`,
      source: 'manual',
      reason: `Left early, ${t.tag}`,
    },
    201,
  )
  const voided = punched.results[3].punch.id as string
  await call(`/punches/${voided}/void`, { reason: `Entered twice, ${t.tag}` }, 200)
  await cloud.attendanceRounds()
  t.objects.jobId = (await call('/recompute', { from: addDays(past, -1), to: past }, 202)).id
  await cloud.attendanceRounds()
}

/** A credential, as a request carries it. */
export type Caller =
  | { kind: 'api_key' | 'oauth_token' | 'admin_token'; token: string }
  | { kind: 'session'; browser: Browser }
  | { kind: 'anonymous' }

export const callerLabel = (caller: Caller) => caller.kind

/** The credentials a tenant calls a route of a family with: each kind the family takes. */
export function callersOf(family: Family, t: TenantFixture): Caller[] {
  if (family === 'public') {
    return [
      { kind: 'api_key', token: t.apiKey },
      { kind: 'oauth_token', token: t.oauthToken },
    ]
  }
  if (family === 'console') {
    return [
      { kind: 'admin_token', token: t.adminToken },
      { kind: 'session', browser: t.session },
    ]
  }
  return [{ kind: 'anonymous' }]
}

/** A request body: JSON, or text of a media type (CSV imports, OAuth forms). */
export type Body = { json: unknown } | { text: string; contentType: string }

const FORM = 'application/x-www-form-urlencoded'

/**
 * A valid body for each route that takes one, in tenant `t`. A route whose OpenAPI operation has a
 * request body and that has no entry here fails the tests that need one.
 */
export const BODIES: Record<
  string,
  (t: TenantFixture, cloud: TestCloud, path: Record<string, string>) => Body
> = {
  [`POST ${PUBLIC}/attendance/punches`]: (t, cloud) => ({
    json: {
      employeeCode: t.objects.employeeCode,
      punchType: 'OUT',
      punchedAt: formatTimestamp(cloud.now() - 60_000_000),
    },
  }),
  [`POST ${PUBLIC}/attendance/punches/batch`]: (t, cloud) => ({
    json: {
      punches: [
        {
          employeeCode: t.objects.employeeCode,
          punchType: 'IN',
          punchedAt: formatTimestamp(cloud.now() - 1),
        },
      ],
    },
  }),
  [`POST ${CONSOLE}/webhooks`]: (t) => ({ json: { url: `https://hooks.example.com/${t.tag}/created` } }),
  [`PATCH ${CONSOLE}/webhooks/:endpointId`]: (t) => ({ json: { description: `changed ${t.tag}` } }),
  [`POST ${CONSOLE}/webhooks/:endpointId/rotate-secret`]: () => ({ json: { graceSeconds: 60 } }),
  [`POST ${CONSOLE}/webhooks/:endpointId/replay`]: () => ({ json: { since: '2020-01-01T00:00:00Z' } }),
  [`POST ${CONSOLE}/api-keys`]: (t) => ({ json: { name: `key ${t.tag}`, scopes: ['employees:read'] } }),
  [`POST ${CONSOLE}/oauth-apps`]: (t) => ({ json: { name: `app ${t.tag}`, scopes: ['employees:read'] } }),
  [`POST ${CONSOLE}/oauth-apps/:appId/rotate-secret`]: () => ({ json: { graceSeconds: 3600 } }),
  [`POST ${CONSOLE}/employees/import`]: (t) => ({
    text: `employeeCode,name\n${t.tag}-IMPORTED,Imported ${t.tag}\n`,
    contentType: 'text/csv',
  }),
  [`POST ${CONSOLE}/users`]: (t) => ({ json: { email: uniqueEmail(`invited-${t.tag}`), role: 'viewer' } }),
  [`POST ${OAUTH}/token`]: (t) => ({
    text: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
    }).toString(),
    contentType: FORM,
  }),
  [`POST ${OAUTH}/introspect`]: (t) => ({
    text: new URLSearchParams({
      token: t.oauthToken,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
    }).toString(),
    contentType: FORM,
  }),
}

/** The attendance routes' bodies, the same in the public and the console API. */
for (const api of [PUBLIC, CONSOLE]) {
  const A = `${api}/attendance`
  const shift = (code: string): Body => ({
    json: { code, name: 'General', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 },
  })
  Object.assign(BODIES, {
    [`POST ${A}/recompute`]: (t: TenantFixture) => ({
      json: { from: t.dates.past, to: t.dates.past, employeeCodes: [t.objects.employeeCode] },
    }),
    // The final days of `past`: locked by the first request, none left by the next.
    [`POST ${A}/lock`]: (t: TenantFixture) => ({ json: { from: t.dates.past, to: t.dates.past } }),
    [`POST ${A}/punches/:punchId/void`]: (t: TenantFixture) => ({ json: { reason: `Void by ${t.tag}` } }),
    [`POST ${A}/shifts`]: () => shift(uniqueCode('S')),
    [`PATCH ${A}/shifts/:code`]: (_t: TenantFixture, _c: TestCloud, path: Record<string, string>) =>
      shift(path.code ?? 'NO-PATH'),
    [`POST ${A}/policies`]: () => ({
      json: { group: uniqueCode('G'), fullDayMinutes: 450, weeklyOffDays: [0] },
    }),
    [`PATCH ${A}/policies/:id`]: () => ({ json: { fullDayMinutes: 465, weeklyOffDays: [0, 6] } }),
    [`POST ${A}/assignments`]: (t: TenantFixture) => ({
      json: { group: uniqueCode('G'), shiftCode: t.objects.shiftCode, effectiveFrom: t.dates.today },
    }),
    [`POST ${A}/holidays`]: (t: TenantFixture) => ({
      json: { date: t.dates.today, name: `Holiday of ${t.tag}`, group: uniqueCode('G') },
    }),
  })
}
// The console's manual punch (in the public API, POST /attendance/punches with source manual).
BODIES[`POST ${CONSOLE}/attendance/punches`] = (t) => ({
  json: {
    employeeCode: t.objects.employeeCode,
    punchType: 'OUT',
    punchedAt: `${t.dates.past}T17:30:00+05:30`,
    source: 'manual',
    reason: `Forgot to punch, ${t.tag}`,
  },
})

/** The body of a route that takes one, for its path's values; fails for one that should and has none here. */
export function bodyFor(
  route: RouteRecord,
  t: TenantFixture,
  cloud: TestCloud,
  path: Record<string, string> = {},
): Body | undefined {
  const make = BODIES[routeKey(route)]
  return make?.(t, cloud, path)
}

/**
 * Query parameters some GET routes require, by route URL: a period that holds the tenant's
 * attendance days (`t.dates`).
 */
export const REQUIRED_QUERIES: Record<string, (t: TenantFixture) => Record<string, string>> = {}
for (const api of [PUBLIC, CONSOLE]) {
  const period = (t: TenantFixture) => ({ from: t.dates.from, to: t.dates.to })
  REQUIRED_QUERIES[`${api}/attendance/days.csv`] = period
  REQUIRED_QUERIES[`${api}/attendance/summaries`] = period
}

/** A URL with query parameters set (replacing any of the same name); values are encoded. */
export function withQuery(url: string, params: Record<string, string> = {}): string {
  const [path, query] = url.split('?') as [string, string | undefined]
  const search = new URLSearchParams(query)
  for (const [name, value] of Object.entries(params)) search.set(name, value)
  const text = search.toString()
  return text === '' ? path : `${path}?${text}`
}

/** `:name` and `*` in a route's URL, filled in (values are encoded). */
export function fillPath(url: string, values: Record<string, string>): string {
  return url
    .replace(/:(\w+)/g, (_, name: string) => {
      const value = values[name]
      if (value === undefined) throw new Error(`no value for :${name} in ${url}`)
      return encodeURIComponent(value)
    })
    .replace(/\*$/, () => values['*'] ?? 'index.html')
}

/** What a wildcard route's `*` is filled with: a file or page that exists. */
export const WILDCARDS: Record<string, string> = {
  '/console/*': 'webhooks',
  '/docs/static/*': 'index.html',
}

export interface Planned {
  options: InjectOptions
  /** What the caller sent, as text: an answer may echo it without leaking anything. */
  sent: string
}

/** An inject request for a route, by a caller, with a path already filled in and an optional body. */
export function plan(
  route: { method: string },
  url: string,
  caller: Caller,
  body: Body | undefined,
  extra: { headers?: Record<string, string>; remoteAddress?: string } = {},
): Planned {
  const headers: Record<string, string> = { ...extra.headers }
  const options: InjectOptions = { method: route.method as InjectOptions['method'], url, headers }
  if (caller.kind === 'api_key' || caller.kind === 'oauth_token' || caller.kind === 'admin_token') {
    Object.assign(headers, bearer(caller.token))
  } else if (caller.kind === 'session') {
    options.cookies = { [SESSION_COOKIE]: caller.browser.cookie }
    if (route.method !== 'GET' && route.method !== 'HEAD') headers['x-csrf-token'] = caller.browser.csrfToken
  }
  let sent = url
  if (body !== undefined) {
    if ('json' in body) {
      options.payload = JSON.stringify(body.json)
      headers['content-type'] = 'application/json'
    } else {
      options.payload = body.text
      headers['content-type'] = body.contentType
    }
    sent += `\n${String(options.payload)}`
  }
  if (extra.remoteAddress) options.remoteAddress = extra.remoteAddress
  return { options, sent }
}

/** A new owner of tenant `t`, signed in: for the session routes, which sign out or change a password. */
export async function freshSession(
  cloud: TestCloud,
  t: TenantFixture,
): Promise<{ user: TestUser; browser: Browser }> {
  const user = await newUser(cloud, t.id, 'owner')
  return { user, browser: await signIn(cloud, user.email, user.password) }
}

/**
 * A valid request of tenant `t` to any route, as its own caller would send it: its own objects in
 * the path (new ones where the request changes or ends them), a valid body, and a credential of
 * the kind the route takes (`caller` chooses one, for the families that take several).
 */
export async function ownRequest(
  cloud: TestCloud,
  route: RouteRecord,
  t: TenantFixture,
  caller: Caller = callersOf(familyOf(route), t)[0] as Caller,
): Promise<Planned> {
  const family = familyOf(route)
  const values: Record<string, string> = { '*': WILDCARDS[route.url] ?? 'index.html' }
  const changes = route.method !== 'GET' && route.method !== 'HEAD'
  for (const name of pathParams(route.url)) {
    const param = objectParamOf(route.url, name)
    if (!param) throw new Error(`:${name} of ${routeKey(route)} is not classified in OBJECT_PARAMS`)
    values[name] = changes ? await freshObject(cloud, t, param) : t.objects[param]
  }
  // A tenant may have 3 recompute jobs waiting at once: the earlier ones are run first.
  if (route.url.endsWith('/attendance/recompute')) await finishRecomputeJobs(cloud)
  const url = withQuery(fillPath(route.url, values), REQUIRED_QUERIES[route.url]?.(t))
  if (family === 'session') {
    const { user, browser } = await freshSession(cloud, t)
    if (route.method === 'POST' && route.url === `${CONSOLE}/session`) {
      return plan(
        route,
        url,
        { kind: 'anonymous' },
        { json: { email: user.email, password: user.password } },
        {
          remoteAddress: someAddress(),
        },
      )
    }
    const body =
      route.url === `${CONSOLE}/session/password`
        ? { json: { currentPassword: user.password, newPassword: `new ${randomBytes(8).toString('hex')}` } }
        : undefined
    return plan(route, url, { kind: 'session', browser }, body)
  }
  if (family === 'oauth' && route.url === `${OAUTH}/revoke`) {
    const token = await accessToken(cloud, t.client.clientId, t.client.clientSecret)
    const form = new URLSearchParams({
      token,
      client_id: t.client.clientId,
      client_secret: t.client.clientSecret,
    })
    return plan(route, url, { kind: 'anonymous' }, { text: form.toString(), contentType: FORM })
  }
  return plan(route, url, caller, bodyFor(route, t, cloud, values))
}

export async function send(cloud: TestCloud, planned: Planned): Promise<LightMyRequestResponse> {
  return cloud.app.inject(planned.options)
}

/** A problem's code, or undefined for an empty body or one that is not a problem. */
export function codeOf(res: LightMyRequestResponse): string | undefined {
  if (res.body === '') return undefined
  try {
    return (res.json() as { code?: string }).code
  } catch {
    return undefined
  }
}
