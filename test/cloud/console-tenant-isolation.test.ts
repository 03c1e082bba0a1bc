/**
 * Tenancy for the console API (docs/decisions/0005-tenant-from-credential.md): a user of tenant A
 * cannot reach any of tenant B's objects, and a viewer cannot change anything. For every route under
 * /api/console/v1, how tenant A's admin token tries to reach tenant B's objects (webhook endpoints
 * and deliveries, API keys, OAuth apps, employees, audit entries, console users, dashboard counts)
 * and what must happen instead; and that a viewer is refused every route that changes something. A
 * route with no probe fails the test, so a new console route cannot escape it.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { formatTimestamp } from '../../shared/time.js'
import {
  bearer,
  describeEachDatabase,
  employee,
  TEST_ACTOR,
  type TestCloud,
} from '../support/cloud-harness.js'
import { makeFailedDeliveries } from '../support/failed-deliveries.js'
import { viewerConsole } from './console-kit.js'
import {
  type AttendanceCall,
  type AttendanceSide,
  attendanceDates,
  attendanceProbes,
  attendanceSnapshot,
  manualPunchProbe,
  seedAttendance,
} from './security/attendance-isolation.js'
import { objectParamOf } from './security/security-kit.js'

const V1 = '/api/console/v1'

const attendanceCall =
  (cloud: TestCloud, token: string): AttendanceCall =>
  (method, path, payload) =>
    cloud.app.inject({
      method,
      url: `${V1}/attendance${path}`,
      headers: bearer(token),
      ...(payload ? { payload } : {}),
    })

interface Tenants {
  a: { id: string; token: string; endpointId: string; deliveries: number; attendance: AttendanceSide }
  b: {
    attendance: AttendanceSide
    id: string
    token: string
    endpointIds: string[]
    deliveryIds: string[]
    keyIds: string[]
    appIds: string[]
    userIds: string[]
    auditIds: string[]
  }
}

/** Employee codes only B has; and one both have, each their own. */
const B_ONLY = ['B-ONLY-1', 'B-ONLY-2']
const SHARED = 'E001'

type Probe = (cloud: TestCloud, t: Tenants) => Promise<void>
type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE'

const call = (cloud: TestCloud, token: string, method: Method, url: string, payload?: object) =>
  cloud.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) })

const expectNotFound = (res: LightMyRequestResponse, code: string) => {
  expect(res.statusCode, res.body).toBe(404)
  if (res.body !== '') expect(res.json().code).toBe(code)
}

/** The ids a console listing shows A (every page), checked to hold none of B's. */
async function listedToA(cloud: TestCloud, t: Tenants, path: string, of: string[]): Promise<string[]> {
  const ids: string[] = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const res = await call(cloud, t.a.token, 'GET', `${V1}${path}${cursor ? `${sep}cursor=${cursor}` : ''}`)
    expect(res.statusCode, res.body).toBe(200)
    ids.push(...res.json().data.map((o: { id: string }) => o.id))
    cursor = res.json().nextCursor
  } while (cursor !== null)
  expect(
    ids.filter((id) => of.includes(id)),
    path,
  ).toEqual([])
  return ids
}

/** A cursor from B's own listing, given to A: it moves A within A's own data only. */
async function withCursorOfB(cloud: TestCloud, t: Tenants, path: string, of: string[]) {
  const bPage = (await call(cloud, t.b.token, 'GET', `${V1}${path}?limit=1`)).json()
  expect(bPage.nextCursor, path).not.toBeNull()
  const res = await call(cloud, t.a.token, 'GET', `${V1}${path}?limit=200&cursor=${bPage.nextCursor}`)
  expect(res.statusCode, res.body).toBe(200)
  expect(
    res.json().data.filter((o: { id: string }) => of.includes(o.id)),
    path,
  ).toEqual([])
}

/** Each of B's ids, in the path through A's token, is not found. */
function onEachId(
  ids: (t: Tenants) => string[],
  method: Method,
  path: (id: string) => string,
  code: string,
  payload?: object,
): Probe {
  return async (cloud, t) => {
    for (const id of ids(t))
      expectNotFound(await call(cloud, t.a.token, method, `${V1}${path(id)}`, payload), code)
  }
}

/** Every one of B's endpoints, through A's token, is not found. */
function onEachOfB(method: Method, suffix: string, payload?: object): Probe {
  return async (cloud, t) => {
    for (const id of t.b.endpointIds) {
      expectNotFound(
        await call(cloud, t.a.token, method, `${V1}/webhooks/${id}${suffix}`, payload),
        'webhook_endpoint_not_found',
      )
    }
  }
}

const PROBES: Record<string, Probe> = {
  [`GET ${V1}/webhooks`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'GET', `${V1}/webhooks`)
    expect(res.statusCode).toBe(200)
    const ids = res.json().data.map((e: { id: string }) => e.id)
    expect(ids).toContain(t.a.endpointId)
    expect(ids.filter((id: string) => t.b.endpointIds.includes(id))).toEqual([])
  },
  [`HEAD ${V1}/webhooks`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/webhooks`)).statusCode).toBe(200)
  },
  [`POST ${V1}/webhooks`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'POST', `${V1}/webhooks`, {
      url: 'https://hooks.example.com/a-new',
    })
    expect(res.statusCode).toBe(201)
    expect(t.b.endpointIds).not.toContain(res.json().id)
  },
  [`GET ${V1}/webhooks/:endpointId`]: onEachOfB('GET', ''),
  [`HEAD ${V1}/webhooks/:endpointId`]: onEachOfB('HEAD', ''),
  [`PATCH ${V1}/webhooks/:endpointId`]: onEachOfB('PATCH', '', { url: 'https://attacker.example.com/' }),
  [`DELETE ${V1}/webhooks/:endpointId`]: onEachOfB('DELETE', ''),
  [`POST ${V1}/webhooks/:endpointId/pause`]: onEachOfB('POST', '/pause'),
  [`POST ${V1}/webhooks/:endpointId/resume`]: onEachOfB('POST', '/resume'),
  [`POST ${V1}/webhooks/:endpointId/test`]: onEachOfB('POST', '/test'),
  [`POST ${V1}/webhooks/:endpointId/rotate-secret`]: onEachOfB('POST', '/rotate-secret', { graceSeconds: 0 }),
  [`POST ${V1}/webhooks/:endpointId/reveal-secret`]: onEachOfB('POST', '/reveal-secret'),
  [`POST ${V1}/webhooks/:endpointId/replay`]: onEachOfB('POST', '/replay', { since: '2020-01-01T00:00:00Z' }),
  [`GET ${V1}/webhook-deliveries`]: async (cloud, t) => {
    const seen = async (query: string) => {
      const res = await call(cloud, t.a.token, 'GET', `${V1}/webhook-deliveries?limit=200${query}`)
      expect(res.statusCode, res.body).toBe(200)
      return res.json().data.map((d: { id: string }) => d.id) as string[]
    }
    expect((await seen('')).filter((id) => t.b.deliveryIds.includes(id))).toEqual([])
    expect(await seen(`&endpointId=${t.b.endpointIds[0]}`)).toEqual([])
    // A cursor from B's listing moves A within A's own log only.
    const bPage = (await call(cloud, t.b.token, 'GET', `${V1}/webhook-deliveries?limit=1`)).json()
    expect(bPage.nextCursor).not.toBeNull()
    expect((await seen(`&cursor=${bPage.nextCursor}`)).filter((id) => t.b.deliveryIds.includes(id))).toEqual(
      [],
    )
  },
  [`HEAD ${V1}/webhook-deliveries`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/webhook-deliveries`)).statusCode).toBe(200)
  },
  [`GET ${V1}/webhook-deliveries/:deliveryId`]: async (cloud, t) => {
    for (const id of t.b.deliveryIds) {
      expectNotFound(
        await call(cloud, t.a.token, 'GET', `${V1}/webhook-deliveries/${id}`),
        'webhook_delivery_not_found',
      )
    }
  },
  [`HEAD ${V1}/webhook-deliveries/:deliveryId`]: async (cloud, t) => {
    expectNotFound(
      await call(cloud, t.a.token, 'HEAD', `${V1}/webhook-deliveries/${t.b.deliveryIds[0]}`),
      'webhook_delivery_not_found',
    )
  },
  [`POST ${V1}/webhook-deliveries/:deliveryId/retry`]: async (cloud, t) => {
    for (const id of t.b.deliveryIds) {
      expectNotFound(
        await call(cloud, t.a.token, 'POST', `${V1}/webhook-deliveries/${id}/retry`),
        'webhook_delivery_not_found',
      )
    }
  },
  [`GET ${V1}/api-keys`]: async (cloud, t) => {
    expect((await listedToA(cloud, t, '/api-keys', t.b.keyIds)).length).toBeGreaterThan(0)
  },
  [`HEAD ${V1}/api-keys`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/api-keys`)).statusCode).toBe(200)
  },
  [`POST ${V1}/api-keys`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'POST', `${V1}/api-keys`, { scopes: ['employees:read'] })
    expect(res.statusCode).toBe(201)
    expect(t.b.keyIds).not.toContain(res.json().id)
  },
  [`POST ${V1}/api-keys/:keyId/revoke`]: onEachId(
    (t) => t.b.keyIds,
    'POST',
    (id) => `/api-keys/${id}/revoke`,
    'api_key_not_found',
  ),
  [`GET ${V1}/oauth-apps`]: async (cloud, t) => {
    expect((await listedToA(cloud, t, '/oauth-apps', t.b.appIds)).length).toBeGreaterThan(0)
  },
  [`HEAD ${V1}/oauth-apps`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/oauth-apps`)).statusCode).toBe(200)
  },
  [`POST ${V1}/oauth-apps`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'POST', `${V1}/oauth-apps`, {
      name: 'a app',
      scopes: ['employees:read'],
    })
    expect(res.statusCode).toBe(201)
    expect(t.b.appIds).not.toContain(res.json().id)
  },
  [`POST ${V1}/oauth-apps/:appId/rotate-secret`]: onEachId(
    (t) => t.b.appIds,
    'POST',
    (id) => `/oauth-apps/${id}/rotate-secret`,
    'oauth_app_not_found',
    { graceSeconds: 0 },
  ),
  [`POST ${V1}/oauth-apps/:appId/revoke`]: onEachId(
    (t) => t.b.appIds,
    'POST',
    (id) => `/oauth-apps/${id}/revoke`,
    'oauth_app_not_found',
  ),
  [`GET ${V1}/employees`]: async (cloud, t) => {
    const bIds = (await cloud.services.employees.list(t.b.id, { limit: 200 })).data.map((e) => e.id)
    expect(await listedToA(cloud, t, '/employees?limit=1', bIds)).toHaveLength(1)
    for (const search of ['B-ONLY', 'b-only-1', 'Employee B']) {
      const res = await call(cloud, t.a.token, 'GET', `${V1}/employees?search=${encodeURIComponent(search)}`)
      expect(res.json().data, search).toEqual([])
    }
    await withCursorOfB(cloud, t, '/employees', bIds)
  },
  [`HEAD ${V1}/employees`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/employees`)).statusCode).toBe(200)
  },
  [`GET ${V1}/employees/:employeeCode`]: async (cloud, t) => {
    for (const code of B_ONLY)
      expectNotFound(await call(cloud, t.a.token, 'GET', `${V1}/employees/${code}`), 'employee_not_found')
    const own = await call(cloud, t.a.token, 'GET', `${V1}/employees/${SHARED}`)
    expect(own.json().name).toBe('Employee of A')
  },
  [`HEAD ${V1}/employees/:employeeCode`]: async (cloud, t) => {
    expectNotFound(await call(cloud, t.a.token, 'HEAD', `${V1}/employees/${B_ONLY[0]}`), 'employee_not_found')
  },
  [`POST ${V1}/employees/import`]: async (cloud, t) => {
    // B's codes, and the shared one, imported by A: A's own employees, B's untouched.
    const res = await cloud.app.inject({
      method: 'POST',
      url: `${V1}/employees/import`,
      headers: { ...bearer(t.a.token), 'content-type': 'text/csv' },
      payload: `employeeCode,name,email,department,location,status\n${B_ONLY[0]},Taken by A,,,,INACTIVE\n${SHARED},Employee of A,e001@example.test,Assembly,Pune,ACTIVE\n`,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().lines.map((l: { outcome: string }) => l.outcome)).toEqual(['created', 'unchanged'])
  },
  [`GET ${V1}/audit`]: async (cloud, t) => {
    expect((await listedToA(cloud, t, '/audit?limit=200', t.b.auditIds)).length).toBeGreaterThan(0)
    for (const targetId of [...t.b.keyIds, ...t.b.appIds, ...t.b.endpointIds]) {
      const res = await call(cloud, t.a.token, 'GET', `${V1}/audit?targetId=${targetId}`)
      expect(res.json().data, targetId).toEqual([])
    }
    await withCursorOfB(cloud, t, '/audit', t.b.auditIds)
  },
  [`HEAD ${V1}/audit`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/audit`)).statusCode).toBe(200)
  },
  [`GET ${V1}/dashboard/punches-per-hour`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'GET', `${V1}/dashboard/punches-per-hour?hours=24`)
    expect(res.statusCode).toBe(200)
    expect(res.json().data.map((h: { count: number }) => h.count)).toEqual(Array(24).fill(0))
  },
  [`HEAD ${V1}/dashboard/punches-per-hour`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/dashboard/punches-per-hour`)).statusCode).toBe(200)
  },
  [`GET ${V1}/dashboard/webhook-deliveries`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'GET', `${V1}/dashboard/webhook-deliveries?days=2`)
    expect(res.statusCode).toBe(200)
    const days = res.json().data as Record<string, number>[]
    const total = days.reduce(
      (n, d) => n + (d.succeeded ?? 0) + (d.failed ?? 0) + (d.exhausted ?? 0) + (d.pending ?? 0),
      0,
    )
    expect(total).toBe(t.a.deliveries)
  },
  [`HEAD ${V1}/dashboard/webhook-deliveries`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/dashboard/webhook-deliveries`)).statusCode).toBe(200)
  },
  [`GET ${V1}/users`]: async (cloud, t) => {
    expect((await listedToA(cloud, t, '/users', t.b.userIds)).length).toBeGreaterThan(0)
  },
  [`HEAD ${V1}/users`]: async (cloud, t) => {
    expect((await call(cloud, t.a.token, 'HEAD', `${V1}/users`)).statusCode).toBe(200)
  },
  [`POST ${V1}/users`]: async (cloud, t) => {
    const res = await call(cloud, t.a.token, 'POST', `${V1}/users`, {
      email: `viewer-${t.a.id.toLowerCase()}@a.example.com`,
      role: 'viewer',
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(t.b.userIds).not.toContain(res.json().user?.id ?? res.json().id)
  },
  [`DELETE ${V1}/users/:userId`]: onEachId(
    (t) => t.b.userIds,
    'DELETE',
    (id) => `/users/${id}`,
    'console_user_not_found',
  ),
  // Attendance, as in the public API; B_ONLY[1] is never A's (A imports B_ONLY[0] above).
  ...Object.fromEntries(
    Object.entries({
      ...attendanceProbes(V1),
      [`POST ${V1}/attendance/punches`]: manualPunchProbe,
    }).map(([route, probe]): [string, Probe] => [
      route,
      (cloud, t) => probe({ cloud, a: t.a.attendance, b: t.b.attendance, bOnly: B_ONLY[1] as string }),
    ]),
  ),
}

/** All of B's administration state as B sees it, to compare before and after A's attempts. */
async function snapshotOf(cloud: TestCloud, t: Tenants) {
  const get = async (path: string) => (await call(cloud, t.b.token, 'GET', `${V1}${path}`)).json()
  const details = []
  for (const id of t.b.deliveryIds) details.push(await get(`/webhook-deliveries/${id}`))
  const events = await cloud.database.db
    .selectFrom('webhook_events')
    .select('id')
    .where('tenant_id', '=', t.b.id)
    .execute()
  return {
    endpoints: await get('/webhooks'),
    deliveries: await get('/webhook-deliveries?limit=200'),
    details,
    keys: await get('/api-keys'),
    apps: await get('/oauth-apps'),
    employees: await get('/employees?limit=200'),
    users: await get('/users?limit=200'),
    audit: await get('/audit?limit=200'),
    punches: await get('/dashboard/punches-per-hour?hours=24'),
    deliveriesPerDay: await get('/dashboard/webhook-deliveries?days=2'),
    events: events.length,
    attendance: await attendanceSnapshot(cloud, t.b.attendance),
  }
}

describeEachDatabase('tenant isolation of the console API', (cloud) => {
  const t = {} as Tenants

  beforeAll(async () => {
    // Days' states follow the clock: it stands still, so that B's are the same before and after.
    cloud.fixedNow = cloud.now()
    const aId = await cloud.createTenant()
    const bId = await cloud.createTenant()
    const endpoints = cloud.services.webhookEndpoints
    const make = async (tenantId: string, path: string) =>
      (
        await endpoints.create(
          tenantId,
          { url: `https://hooks.example.com/${path}`, events: ['webhook.test'] },
          TEST_ACTOR,
        )
      ).endpoint.id
    const services = cloud.services
    const aEndpoint = await make(aId, 'a')
    const bEndpoints = [await make(bId, 'b1'), await make(bId, 'b2')]
    const bDeliveries = await makeFailedDeliveries(cloud, bId, bEndpoints, 2)
    const aDeliveries = await makeFailedDeliveries(cloud, aId, [aEndpoint], 2)
    // Keys, apps and employees of both; punches of B's within the dashboard's hours.
    const keyIds: string[] = []
    const appIds: string[] = []
    for (const tenantId of [aId, bId, bId]) {
      const key = await services.apiKeys.create(tenantId, { scopes: ['attendance:write'] }, TEST_ACTOR)
      const app = await services.oauthApps.create(
        tenantId,
        { name: 'app', scopes: ['employees:read'] },
        TEST_ACTOR,
      )
      if (tenantId === bId) {
        keyIds.push(key.id)
        appIds.push(app.id)
      }
    }
    await cloud.upsertEmployees(aId, [employee(SHARED, { name: 'Employee of A' })])
    await cloud.upsertEmployees(bId, [
      employee(SHARED, { name: 'Employee B' }),
      ...B_ONLY.map((code) => employee(code, { name: `Employee B ${code}` })),
    ])
    const bKey = await cloud.createApiKey(bId)
    for (const code of [SHARED, ...B_ONLY]) {
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/api/public/v1/attendance/punches',
        headers: bearer(bKey),
        payload: {
          employeeCode: code,
          punchType: 'IN',
          punchedAt: formatTimestamp(cloud.now() - 3_600_000_000),
        },
      })
      expect(res.statusCode, res.body).toBe(201)
    }
    const aToken = await cloud.createAdminToken(aId)
    const bToken = await cloud.createAdminToken(bId)
    const aAttendance = await seedAttendance(cloud, attendanceCall(cloud, aToken), [SHARED], { label: 'A' })
    const bAttendance = await seedAttendance(cloud, attendanceCall(cloud, bToken), [SHARED, ...B_ONLY], {
      label: 'B',
      extraShifts: ['B-NIGHT', 'B-EVE'],
      lock: true,
    })
    t.a = {
      id: aId,
      token: aToken,
      endpointId: aEndpoint,
      deliveries: aDeliveries.length,
      attendance: aAttendance,
    }
    t.b = {
      attendance: bAttendance,
      id: bId,
      token: bToken,
      endpointIds: bEndpoints,
      deliveryIds: bDeliveries,
      keyIds,
      appIds,
      userIds: (await services.consoleUsers.list(bId, { limit: 200 })).data.map((u) => u.id),
      auditIds: (await services.audit.list(bId, { limit: 200 })).data.map((e) => e.id),
    }
    expect(t.b.userIds.length).toBeGreaterThan(0)
  }, 60_000)

  it('covers every console route with a probe', () => {
    const consoleRoutes = cloud.app.routeTable
      .filter((r) => r.access !== undefined)
      .map((r) => `${r.method} ${r.url}`)
    expect(consoleRoutes.length).toBeGreaterThan(0)
    for (const route of consoleRoutes)
      expect(route.startsWith(`${route.split(' ')[0]} ${V1}/`), route).toBe(true)
    const unprobed = consoleRoutes.filter((route) => !(route in PROBES))
    expect(unprobed, 'add a tenant-isolation probe for each new console route').toEqual([])
  })

  it("never lets tenant A's admin token read or change tenant B's objects", async () => {
    const before = await snapshotOf(cloud, t)
    for (const route of cloud.app.routeTable.filter((r) => r.access !== undefined)) {
      const probe = PROBES[`${route.method} ${route.url}`]
      if (probe) await probe(cloud, t)
    }
    // Whatever A did, all of B's state, its audit log and its events are exactly as they were.
    expect(await snapshotOf(cloud, t)).toEqual(before)
    // And the probes did act, in A: its own endpoint and deliveries are all there.
    const aEndpoints = (await call(cloud, t.a.token, 'GET', `${V1}/webhooks`)).json().data
    expect(aEndpoints.length).toBeGreaterThanOrEqual(2)
  }, 120_000)

  it("refuses tenant B's token on tenant A's objects the same way", async () => {
    const res = await call(cloud, t.b.token, 'GET', `${V1}/webhooks/${t.a.endpointId}`)
    expectNotFound(res, 'webhook_endpoint_not_found')
    const own = await call(cloud, t.a.token, 'GET', `${V1}/webhooks/${t.a.endpointId}`)
    expect(own.statusCode).toBe(200)
  })
})

describeEachDatabase('a viewer in the console API', (cloud) => {
  it('is refused every route that changes something, may call every one that reads, and changes nothing', async () => {
    const tenantId = await cloud.createTenant()
    const admin = await cloud.createAdminToken(tenantId)
    const endpoint = await cloud.services.webhookEndpoints.create(
      tenantId,
      { url: 'https://hooks.example.com/viewer', events: ['webhook.test'] },
      TEST_ACTOR,
    )
    const [deliveryId] = await makeFailedDeliveries(cloud, tenantId, [endpoint.endpoint.id], 1)
    const key = await cloud.services.apiKeys.create(tenantId, { scopes: ['employees:read'] }, TEST_ACTOR)
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'app', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    await cloud.upsertEmployees(tenantId, [employee(SHARED)])
    cloud.fixedNow = cloud.now()
    const attendance = await seedAttendance(cloud, attendanceCall(cloud, admin), [SHARED], { label: 'A' })
    const { past, from, to } = attendanceDates(cloud)
    const [user] = (await cloud.services.consoleUsers.list(tenantId, { limit: 1 })).data
    // Real ids, so that a refusal is the role's and not a missing object's.
    const ids: Record<string, string> = {
      endpointId: endpoint.endpoint.id,
      deliveryId: deliveryId as string,
      keyId: key.id,
      appId: app.id,
      employeeCode: SHARED,
      userId: user?.id as string,
      punchId: attendance.punchIds[0] as string,
      shiftCode: 'GEN',
      policyId: attendance.policyIds[0] as string,
      assignmentId: attendance.assignmentIds[0] as string,
      holidayId: attendance.holidayIds[0] as string,
      jobId: attendance.jobIds[0] as string,
      workDate: past,
    }
    // The query a route requires: the period of the tenant's days.
    const queries: Record<string, string> = {
      [`${V1}/attendance/days.csv`]: `?from=${from}&to=${to}`,
      [`${V1}/attendance/summaries`]: `?from=${from}&to=${to}`,
    }
    const bodies: Record<string, { payload: string; contentType: string }> = {
      [`${V1}/employees/import`]: {
        payload: 'employeeCode,name\nV1,Viewer Import\n',
        contentType: 'text/csv',
      },
    }
    const viewer = await viewerConsole(cloud, tenantId)
    const state = async () => {
      const get = async (path: string) => (await call(cloud, admin, 'GET', `${V1}${path}`)).json()
      return Promise.all(
        [
          '/webhooks',
          '/webhook-deliveries?limit=200',
          '/api-keys',
          '/oauth-apps',
          '/employees?limit=200',
          '/users',
          '/audit?limit=200',
          '/attendance/days?limit=200',
          '/attendance/corrections?limit=200',
          '/attendance/shifts',
          '/attendance/policies',
          '/attendance/assignments',
          '/attendance/holidays',
          `/attendance/jobs/${attendance.jobIds[0]}`,
        ].map(get),
      )
    }
    const before = await state()
    const routes = cloud.app.routeTable.filter((r) => r.access !== undefined)
    expect(routes.filter((r) => r.access === 'write').length).toBeGreaterThanOrEqual(32)
    for (const route of routes) {
      const url =
        route.url.replace(/:(\w+)/g, (_, name: string) => {
          const id = ids[objectParamOf(route.url, name) ?? name]
          if (id === undefined) throw new Error(`no id for :${name} in ${route.url}`)
          return encodeURIComponent(id)
        }) + (queries[route.url] ?? '')
      const body = bodies[route.url]
      const res = await cloud.app.inject({
        method: route.method as Method,
        url,
        headers: { ...bearer(viewer.token), ...(body ? { 'content-type': body.contentType } : {}) },
        ...(body
          ? { payload: body.payload }
          : route.method === 'POST' || route.method === 'PATCH'
            ? { payload: {} }
            : {}),
      })
      const label = `${route.method} ${route.url}`
      if (route.access === 'write') {
        expect(res.statusCode, label).toBe(403)
        expect(res.json().code, label).toBe('insufficient_role')
      } else {
        expect(res.statusCode, `${label}: ${res.body.slice(0, 200)}`).toBe(200)
      }
    }
    expect(await state()).toEqual(before)
  }, 60_000)
})
