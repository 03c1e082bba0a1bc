/**
 * What test/system/cloud/route-fuzz.ts needs for the console API (/api/console/v1):
 * admin tokens; webhook endpoints, failed deliveries, API keys, OAuth apps and console users to
 * start from; cursors of each listing; near-valid values for their fields and near-valid employee
 * CSV files. What a route may remove or revoke is kept apart from what the other routes use, so
 * that fuzzing one route does not leave the next with nothing to find. Imports go to a tenant of
 * their own: route-fuzz.ts checks the main tenant's employees and punches afterwards.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { EMPLOYEE_STATUSES } from '../../../shared/employee.js'
import { WEBHOOK_EVENT_TYPES } from '../../../shared/webhook-events.js'
import { bearer, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import { makeFailedDeliveries } from '../../support/failed-deliveries.js'
import type { FuzzContext } from '../../support/request-arbitrary.js'

export const isConsoleRoute = (route: RouteRecord): boolean => route.access !== undefined

export interface ConsoleFuzzFixtures {
  /** The tenant's live admin token. */
  adminToken: string
  /** Admin tokens: no response may echo one. */
  secrets: string[]
  /** The context for one console route: the public one, with the admin token and console hints. */
  contextFor(route: RouteRecord, base: FuzzContext): FuzzContext
}

// Allowed and refused alike: https to public names and addresses, and what the SSRF policy refuses.
const URLS = [
  'https://hooks.example.com/hajri',
  'https://hr.example.org:8443/webhooks?tenant=1',
  'https://198.51.100.7/hook',
  'http://hooks.example.com/plain',
  'https://127.0.0.1/hook',
  'https://[::1]/hook',
  'https://10.0.0.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://user:pass@hooks.example.com/',
  'ftp://hooks.example.com/',
]

const CSV_COLUMNS = ['employeeCode', 'name', 'email', 'department', 'location', 'status'] as const

/** A field as a spreadsheet writes it: quoted when it must be, and sometimes when it need not be. */
const csvField = (value: string, quote: boolean) =>
  quote || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value

/**
 * Employee CSV files in the CLI's format, near-valid: the required columns and some others in any
 * order, then lines of codes (some repeated), names (some with commas or quotes), emails, statuses in
 * any case, blanks; LF or CRLF, sometimes a byte-order mark.
 */
function employeeCsv(codes: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  const value: Record<(typeof CSV_COLUMNS)[number], fc.Arbitrary<string>> = {
    employeeCode: codes.map(String),
    name: fc.oneof(
      fc.constantFrom('Asha Rao', 'Lal, Mohan', 'Ravi "RK" Kumar', 'Élodie Martin', 'मीरा अय्यर', ''),
      fc.string({ maxLength: 30 }),
    ),
    email: fc.oneof(fc.constantFrom('', 'asha@acme.example', 'not-an-email'), fc.emailAddress()),
    department: fc.oneof(fc.constantFrom('', 'Assembly', 'Paint Shop'), fc.string({ maxLength: 12 })),
    location: fc.constantFrom('', 'Pune', 'Chakan'),
    status: fc.constantFrom('', ...EMPLOYEE_STATUSES, 'inactive', 'Active', 'RETIRED'),
  }
  const columns = fc
    .subarray(['email', 'department', 'location', 'status'] as const)
    .chain((extra) =>
      fc.shuffledSubarray(['employeeCode', 'name', ...extra] as const, { minLength: 2 + extra.length }),
    )
  return columns.chain((cols) =>
    fc
      .record({
        lines: fc.array(
          fc
            .tuple(...cols.map((c) => fc.tuple(value[c], fc.boolean())))
            .map((fields) => fields.map(([v, quote]) => csvField(v, quote)).join(',')),
          { maxLength: 12 },
        ),
        newline: fc.constantFrom('\n', '\r\n'),
        bom: fc.boolean(),
        trailing: fc.boolean(),
      })
      .map(
        ({ lines, newline, bom, trailing }) =>
          `${bom ? '\uFEFF' : ''}${[cols.join(','), ...lines].join(newline)}${trailing ? newline : ''}`,
      ),
  )
}

/** Cursors from the first page of each listing, as a client would pass them back. */
async function cursorsOf(cloud: TestCloud, token: string, urls: string[]): Promise<string[]> {
  const cursors: string[] = []
  for (const url of urls) {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/console/v1${url}`,
      headers: bearer(token),
    })
    const cursor = res.json().nextCursor
    expect(typeof cursor, `${url}: ${res.body.slice(0, 200)}`).toBe('string')
    cursors.push(cursor)
  }
  return cursors
}

/**
 * In `tenantId`: an admin token (and refused ones: revoked, of another tenant, malformed), endpoints,
 * and exhausted deliveries, made by one dispatcher round whose every attempt fails (no network);
 * API keys, OAuth apps and console users; and a tenant of its own for imports.
 */
export async function setUpConsoleFuzz(cloud: TestCloud, tenantId: string): Promise<ConsoleFuzzFixtures> {
  const token = await cloud.createAdminToken(tenantId)
  const importTenant = await cloud.createTenant()
  const importToken = await cloud.createAdminToken(importTenant)
  const revoked = await cloud.services.adminTokens.create(tenantId, {}, TEST_ACTOR)
  await cloud.services.adminTokens.revoke(tenantId, revoked.id, TEST_ACTOR)
  const stranger = await cloud.createAdminToken(await cloud.createTenant())
  const endpoints = cloud.services.webhookEndpoints
  const create = async (n: number) =>
    Promise.all(
      Array.from({ length: n }, async (_, i) => {
        // Test events only, so that the deliveries below are exactly the test events sent.
        const input = { url: `https://hooks.example.com/${i}`, events: ['webhook.test' as const] }
        const { endpoint } = await endpoints.create(tenantId, input, TEST_ACTOR)
        return endpoint.id
      }),
    )
  const kept = await create(3)
  const deletable = await create(20)
  // Replay makes every failed delivery of its endpoint pending: its endpoints' are not the retried ones.
  const replayed = await create(2)

  // Failed deliveries to retry (of `kept`) and to replay (of `replayed`).
  const deliveryIds = await makeFailedDeliveries(cloud, tenantId, kept, 4)
  await makeFailedDeliveries(cloud, tenantId, replayed, 4)
  const cursors: string[] = []
  for (const query of [
    { limit: 1 },
    { limit: 2, status: 'exhausted' as const },
    { limit: 1, endpointId: kept[0] },
  ]) {
    const page = await cloud.services.webhookDeliveries.list(tenantId, query)
    expect(page.nextCursor).not.toBeNull()
    cursors.push(page.nextCursor as string)
  }

  // Keys and apps: some to revoke or rotate, and the rest left alone.
  const keyIds: string[] = []
  const appIds: string[] = []
  for (let i = 0; i < 10; i++) {
    keyIds.push(
      (await cloud.services.apiKeys.create(tenantId, { scopes: ['employees:read'] }, TEST_ACTOR)).id,
    )
    appIds.push(
      (
        await cloud.services.oauthApps.create(
          tenantId,
          { name: `fuzz ${i}`, scopes: ['employees:read'] },
          TEST_ACTOR,
        )
      ).id,
    )
  }
  // Console users to remove: invited as any script would, through the API.
  const userIds: string[] = []
  for (let i = 0; i < 8; i++) {
    const res = await cloud.app.inject({
      method: 'POST',
      url: '/api/console/v1/users',
      headers: bearer(token),
      payload: {
        email: `fuzz-${i}-${tenantId.toLowerCase()}@example.com`,
        role: i % 2 === 0 ? 'viewer' : 'admin',
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    userIds.push(res.json().user.id)
  }
  const listingCursors: Record<string, string[]> = {
    '/api/console/v1/employees': await cursorsOf(cloud, token, [
      '/employees?limit=1',
      '/employees?limit=1&search=E0',
      '/employees?limit=1&status=ACTIVE&search=e',
    ]),
    '/api/console/v1/audit': await cursorsOf(cloud, token, [
      '/audit?limit=1',
      '/audit?limit=1&targetType=oauth_app',
      `/audit?limit=1&actor=${encodeURIComponent(TEST_ACTOR.name)}&action=api_key.created`,
      `/audit?limit=1&from=${encodeURIComponent('2020-01-01T00:00:00+05:30')}`,
    ]),
    '/api/console/v1/users': await cursorsOf(cloud, token, ['/users?limit=1']),
  }
  const idFrom = (pool: string[], pattern: RegExp) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pool) },
      { weight: 1, arbitrary: fc.stringMatching(pattern) },
    )

  const endpointIdFrom = (pool: string[]) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pool) },
      { weight: 1, arbitrary: fc.stringMatching(/^whk_[0-9A-HJKMNP-TV-Z]{26}$/) },
    )
  const authorization = fc.oneof(
    { weight: 85, arbitrary: fc.constant(`Bearer ${token}`) },
    {
      weight: 15,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        'Bearer',
        `Bearer ${revoked.token}`,
        `Bearer ${stranger}`,
        `Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
        `bearer ${token}`,
        `Basic ${Buffer.from(`${token}:`).toString('base64')}`,
        'Bearer hjt_',
        `Bearer ${'A'.repeat(5000)}`,
      ),
    },
  )
  // The same credentials, good and bad, but the good ones are the import tenant's (`bearer` too:
  // the scheme is case-insensitive, RFC 9110 §11.1).
  const importAuthorization = authorization.map((value) => value?.replaceAll(token, importToken))
  return {
    adminToken: token,
    secrets: [token, revoked.token, stranger, importToken],
    contextFor(route, base) {
      const isImport = route.url.endsWith('/employees/import')
      return {
        ...base,
        authorization: isImport ? importAuthorization : authorization,
        textBodies: { 'text/csv': employeeCsv(base.hints.employeeCode ?? fc.constant('E001')) },
        hints: {
          ...base.hints,
          endpointId: endpointIdFrom(
            route.method === 'DELETE' ? deletable : route.url.endsWith('/replay') ? replayed : kept,
          ),
          deliveryId: fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...deliveryIds) },
            { weight: 1, arbitrary: fc.stringMatching(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/) },
          ),
          url: fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...URLS) },
            { weight: 1, arbitrary: fc.webUrl() },
          ),
          events: fc.subarray([...WEBHOOK_EVENT_TYPES]),
          eventType: fc.constantFrom(...WEBHOOK_EVENT_TYPES),
          cursor: fc.constantFrom(...(listingCursors[route.url] ?? cursors)),
          graceSeconds: fc.oneof(fc.constantFrom(0, 60, 86_400, 30 * 86_400), fc.integer()),
          keyId: idFrom(keyIds, /^key_[0-9A-HJKMNP-TV-Z]{26}$/),
          appId: idFrom(appIds, /^app_[0-9A-HJKMNP-TV-Z]{26}$/),
          userId: idFrom(userIds, /^usr_[0-9A-HJKMNP-TV-Z]{26}$/),
          search: fc.oneof(
            fc.constantFrom('E0', 'e00', 'EMPLOYEE', 'employee e', 'e001@', 'a-9', '%', '_', 'É'),
            fc.string({ minLength: 1, maxLength: 8 }),
          ),
          actor: fc.constantFrom(TEST_ACTOR.name, 'admin_token:adm_01JBZ6Y2RQ85JBK7SD0QYTR420', 'cli:root'),
          targetType: fc.constantFrom('api_key', 'oauth_app', 'webhook_endpoint', 'admin_token'),
          targetId: fc.constantFrom(...keyIds.slice(0, 2), ...appIds.slice(0, 2), ...kept),
          clientId: fc.oneof(
            { weight: 3, arbitrary: fc.constant(undefined) },
            { weight: 1, arbitrary: fc.stringMatching(/^[\x21-\x7E]{8,40}$/) },
          ),
          email: fc.oneof(
            fc.emailAddress().filter((e) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)),
            fc.constantFrom('owner@example.test', 'not-an-email'),
          ),
        },
      }
    },
  }
}
