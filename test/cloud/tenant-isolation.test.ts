import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { SCOPES } from '../../shared/scopes.js'
import { bearer, describeEachDatabase, employee, type TestCloud } from '../support/cloud-harness.js'
import {
  type AttendanceCall,
  type AttendanceSide,
  attendanceProbes,
  attendanceSnapshot,
  seedAttendance,
} from './security/attendance-isolation.js'

const V1 = '/api/public/v1'

interface Tenants {
  a: { id: string; key: string; attendance: AttendanceSide }
  b: { id: string; key: string; punchIds: string[]; employeeIds: string[]; attendance: AttendanceSide }
}

const attendanceCall =
  (cloud: TestCloud, key: string): AttendanceCall =>
  (method, path, payload) =>
    cloud.app.inject({
      method,
      url: `${V1}/attendance${path}`,
      headers: bearer(key),
      ...(payload ? { payload } : {}),
    })

type Probe = (cloud: TestCloud, t: Tenants) => Promise<void>

const expectProblem = (res: LightMyRequestResponse, status: number, code: string) => {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.json().code).toBe(code)
}

const inject = (
  cloud: TestCloud,
  key: string,
  method: 'GET' | 'HEAD' | 'POST',
  url: string,
  payload?: object,
  headers = {},
) =>
  cloud.app.inject({ method, url, headers: { ...bearer(key), ...headers }, ...(payload ? { payload } : {}) })

/**
 * For every public route, how tenant A's credential tries to reach tenant B's data, and what must
 * happen instead. A route with no probe fails the test, so a new route cannot escape it.
 */
const PROBES: Record<string, Probe> = {
  [`GET ${V1}/employees`]: async (cloud, t) => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const res = await inject(
        cloud,
        t.a.key,
        'GET',
        `${V1}/employees?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(res.statusCode).toBe(200)
      seen.push(...res.json().data.map((e: { id: string }) => e.id))
      cursor = res.json().nextCursor
    } while (cursor)
    expect(seen.filter((id) => t.b.employeeIds.includes(id))).toEqual([])
    // A cursor taken from B's listing moves A within A's own data only.
    const bPage = (await inject(cloud, t.b.key, 'GET', `${V1}/employees?limit=1`)).json()
    const res = await inject(cloud, t.a.key, 'GET', `${V1}/employees?limit=200&cursor=${bPage.nextCursor}`)
    expect(res.json().data.filter((e: { id: string }) => t.b.employeeIds.includes(e.id))).toEqual([])
    const sync = await inject(
      cloud,
      t.a.key,
      'GET',
      `${V1}/employees?limit=200&updatedSince=1970-01-01T00:00:00Z`,
    )
    expect(sync.json().data.filter((e: { id: string }) => t.b.employeeIds.includes(e.id))).toEqual([])
  },
  [`HEAD ${V1}/employees`]: async (cloud, t) => {
    expect((await inject(cloud, t.a.key, 'HEAD', `${V1}/employees`)).statusCode).toBe(200)
  },
  [`GET ${V1}/employees/:employeeCode`]: async (cloud, t) => {
    expectProblem(await inject(cloud, t.a.key, 'GET', `${V1}/employees/B-ONLY`), 404, 'employee_not_found')
    const shared = await inject(cloud, t.a.key, 'GET', `${V1}/employees/SHARED`)
    expect(shared.json().name).toBe('Shared in A')
  },
  [`HEAD ${V1}/employees/:employeeCode`]: async (cloud, t) => {
    expect((await inject(cloud, t.a.key, 'HEAD', `${V1}/employees/B-ONLY`)).statusCode).toBe(404)
  },
  [`POST ${V1}/attendance/punches`]: async (cloud, t) => {
    expectProblem(
      await inject(cloud, t.a.key, 'POST', `${V1}/attendance/punches`, {
        employeeCode: 'B-ONLY',
        punchType: 'IN',
      }),
      422,
      'employee_not_found',
    )
    // Nor as a correction (a manual punch).
    expectProblem(
      await inject(cloud, t.a.key, 'POST', `${V1}/attendance/punches`, {
        employeeCode: 'B-ONLY',
        punchType: 'IN',
        source: 'manual',
        reason: 'A corrects B',
      }),
      422,
      'employee_not_found',
    )
    // B's externalId and Idempotency-Key mean nothing in A: A's punch is A's own, newly created.
    const body = {
      employeeCode: 'SHARED',
      punchType: 'IN',
      punchedAt: '2026-11-20T09:00:00+05:30',
      externalId: 'b-ext-1',
    }
    const res = await inject(cloud, t.a.key, 'POST', `${V1}/attendance/punches`, body, {
      'idempotency-key': 'b-key-1',
    })
    expect(res.statusCode).toBe(201)
    expect(res.headers['idempotent-replayed']).toBeUndefined()
    expect(t.b.punchIds).not.toContain(res.json().id)
  },
  ...Object.fromEntries(
    Object.entries(attendanceProbes(V1)).map(([route, probe]): [string, Probe] => [
      route,
      (cloud, t) => probe({ cloud, a: t.a.attendance, b: t.b.attendance, bOnly: 'B-ONLY' }),
    ]),
  ),
  [`POST ${V1}/attendance/punches/batch`]: async (cloud, t) => {
    const res = await inject(
      cloud,
      t.a.key,
      'POST',
      `${V1}/attendance/punches/batch`,
      {
        punches: [
          { employeeCode: 'B-ONLY', punchType: 'IN' },
          {
            employeeCode: 'SHARED',
            punchType: 'OUT',
            punchedAt: '2026-11-20T18:00:00+05:30',
            externalId: 'b-ext-2',
          },
        ],
      },
      { 'idempotency-key': 'b-key-2' },
    )
    expect(res.headers['idempotent-replayed']).toBeUndefined()
    const [unknown, shared] = res.json().results
    expect(unknown.problem.code).toBe('employee_not_found')
    expect(shared.status).toBe('created')
    expect(t.b.punchIds).not.toContain(shared.punch.id)
  },
  [`GET ${V1}/attendance/punches`]: async (cloud, t) => {
    for (const query of ['', '?employeeCode=B-ONLY', '?employeeCode=SHARED', '?from=2026-01-01T00:00:00Z']) {
      const res = await inject(cloud, t.a.key, 'GET', `${V1}/attendance/punches${query}`)
      expect(res.statusCode).toBe(200)
      expect(res.json().data.filter((p: { id: string }) => t.b.punchIds.includes(p.id))).toEqual([])
    }
  },
  [`HEAD ${V1}/attendance/punches`]: async (cloud, t) => {
    expect((await inject(cloud, t.a.key, 'HEAD', `${V1}/attendance/punches`)).statusCode).toBe(200)
  },
  [`GET ${V1}/attendance/punches/:punchId`]: async (cloud, t) => {
    for (const id of t.b.punchIds) {
      expectProblem(
        await inject(cloud, t.a.key, 'GET', `${V1}/attendance/punches/${id}`),
        404,
        'punch_not_found',
      )
    }
  },
  [`HEAD ${V1}/attendance/punches/:punchId`]: async (cloud, t) => {
    expect(
      (await inject(cloud, t.a.key, 'HEAD', `${V1}/attendance/punches/${t.b.punchIds[0]}`)).statusCode,
    ).toBe(404)
  },
}

async function snapshotOf(cloud: TestCloud, key: string, attendance: AttendanceSide) {
  const employees = (await inject(cloud, key, 'GET', `${V1}/employees?limit=200`)).json()
  const punches = (await inject(cloud, key, 'GET', `${V1}/attendance/punches?limit=200`)).json()
  return { employees, punches, attendance: await attendanceSnapshot(cloud, attendance) }
}

describeEachDatabase('tenant isolation', (cloud) => {
  const t = {} as Tenants

  beforeAll(async () => {
    // Days' states follow the clock: it stands still, so that B's are the same before and after.
    cloud.fixedNow = cloud.now()
    const aId = await cloud.createTenant()
    const bId = await cloud.createTenant()
    t.a = { id: aId, key: await cloud.createApiKey(aId, [...SCOPES]), attendance: {} as AttendanceSide }
    t.b = {
      id: bId,
      key: await cloud.createApiKey(bId, [...SCOPES]),
      punchIds: [],
      employeeIds: [],
      attendance: {} as AttendanceSide,
    }
    await cloud.upsertEmployees(aId, [employee('A-ONLY'), employee('SHARED', { name: 'Shared in A' })])
    await cloud.upsertEmployees(bId, [employee('B-ONLY'), employee('SHARED', { name: 'Shared in B' })])
    const bEmployees = (await inject(cloud, t.b.key, 'GET', `${V1}/employees`)).json().data
    t.b.employeeIds = bEmployees.map((e: { id: string }) => e.id)
    const res = await inject(
      cloud,
      t.b.key,
      'POST',
      `${V1}/attendance/punches/batch`,
      {
        punches: [
          { employeeCode: 'B-ONLY', punchType: 'IN', punchedAt: '2026-11-20T09:00:00+05:30' },
          {
            employeeCode: 'SHARED',
            punchType: 'IN',
            punchedAt: '2026-11-20T09:00:00+05:30',
            externalId: 'b-ext-1',
          },
        ],
      },
      { 'idempotency-key': 'b-key-1' },
    )
    t.b.punchIds = res.json().results.map((r: { punch: { id: string } }) => r.punch.id)
    await inject(
      cloud,
      t.b.key,
      'POST',
      `${V1}/attendance/punches/batch`,
      { punches: [{ employeeCode: 'B-ONLY', punchType: 'OUT' }] },
      {
        'idempotency-key': 'b-key-2',
      },
    )
    expect(t.b.punchIds).toHaveLength(2)
    t.a.attendance = await seedAttendance(cloud, attendanceCall(cloud, t.a.key), ['SHARED', 'A-ONLY'], {
      label: 'A',
    })
    t.b.attendance = await seedAttendance(cloud, attendanceCall(cloud, t.b.key), ['SHARED', 'B-ONLY'], {
      label: 'B',
      extraShifts: ['B-NIGHT', 'B-EVE'],
      lock: true,
    })
    t.b.punchIds.push(...t.b.attendance.punchIds)
  }, 60_000)

  it('covers every public route with a probe', () => {
    const publicRoutes = cloud.app.routeTable
      .filter((r) => r.scope !== undefined)
      .map((r) => `${r.method} ${r.url}`)
    expect(publicRoutes.length).toBeGreaterThan(0)
    const unprobed = publicRoutes.filter((route) => !(route in PROBES))
    expect(unprobed, 'add a tenant-isolation probe for each new public route').toEqual([])
  })

  it("never lets tenant A read or write tenant B's employees or punches, on any route", async () => {
    const before = await snapshotOf(cloud, t.b.key, t.b.attendance)
    const publicRoutes = cloud.app.routeTable.filter((r) => r.scope !== undefined)
    for (const route of publicRoutes) {
      const probe = PROBES[`${route.method} ${route.url}`]
      if (probe) await probe(cloud, t)
    }
    // Whatever A did, B's data is exactly as it was.
    expect(await snapshotOf(cloud, t.b.key, t.b.attendance)).toEqual(before)
  }, 120_000)
})
