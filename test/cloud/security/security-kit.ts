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
} as const

export type ObjectParam = keyof typeof OBJECT_PARAMS

export const isObjectParam = (name: string): name is ObjectParam => name in OBJECT_PARAMS

export const pathParams = (url: string): string[] => [...url.matchAll(/:(\w+)/g)].map((m) => m[1] as string)

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
    default:
      return t.objects[param]
  }
}

export async function createTenantFixture(cloud: TestCloud): Promise<TenantFixture> {
  const owner = await activate(cloud, await newTenant(cloud))
  const tenantId = owner.tenantId
  const tag = randomBytes(4).toString('hex').toUpperCase()
  const services = cloud.services
  const apiKey = await cloud.createApiKey(tenantId)
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
  const t: TenantFixture = {
    id: tenantId,
    tag,
    owner,
    session: await signIn(cloud, owner.email, owner.password),
    apiKey,
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
    },
  }
  t.objects.endpointId = await freshObject(cloud, t, 'endpointId')
  const deliveries = await makeFailedDeliveries(cloud, tenantId, [t.objects.endpointId], 2)
  t.objects.deliveryId = deliveries[0] as string
  for (const param of ['keyId', 'appId', 'userId'] as const)
    t.objects[param] = await freshObject(cloud, t, param)
  return t
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
export const BODIES: Record<string, (t: TenantFixture, cloud: TestCloud) => Body> = {
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

/** The body of a route that takes one; fails for one that should and has none here. */
export function bodyFor(route: RouteRecord, t: TenantFixture, cloud: TestCloud): Body | undefined {
  const make = BODIES[routeKey(route)]
  return make?.(t, cloud)
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
    if (!isObjectParam(name))
      throw new Error(`:${name} of ${routeKey(route)} is not classified in OBJECT_PARAMS`)
    values[name] = changes ? await freshObject(cloud, t, name) : t.objects[name]
  }
  const url = fillPath(route.url, values)
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
  return plan(route, url, caller, bodyFor(route, t, cloud))
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
