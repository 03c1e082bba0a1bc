/**
 * Tenant isolation of the attendance routes, the same in the public API and the console API
 * (test/cloud/tenant-isolation.test.ts, test/cloud/console-tenant-isolation.test.ts): each tenant's
 * attendance made through the API (a shift code both tenants have, shifts only B has, policies,
 * assignments, a holiday, punches, a manual punch, a void, days, a finished recompute job, a locked
 * day), and for every attendance route how tenant A's credential tries to reach B's and what must
 * happen instead. B's attendance, as B reads it, is compared before and after all of A's attempts.
 */
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { addDays, localDate } from '../../../cloud/features/attendance/work-dates.js'
import type { TestCloud } from '../../support/cloud-harness.js'

type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE'

/** A request of one tenant's credential to its API: `path` is under the API's `/attendance`. */
export type AttendanceCall = (
  method: Method,
  path: string,
  payload?: object,
) => Promise<LightMyRequestResponse>

interface Day {
  id: string
  employeeCode: string
  workDate: string
  state: string
}

/** One tenant's attendance, as made by `seedAttendance`. */
export interface AttendanceSide {
  call: AttendanceCall
  /** Employee codes: the first is one both tenants have (their own each); the rest are this tenant's only. */
  codes: string[]
  /** Shift codes: GEN (both tenants have one), then this tenant's only. */
  shiftCodes: string[]
  policyIds: string[]
  assignmentIds: string[]
  holidayIds: string[]
  jobIds: string[]
  punchIds: string[]
  /** Every day, from the listing. */
  days: Day[]
}

/** The dates of both tenants' attendance: ten days back (`past`), and a period that holds every day. */
export function attendanceDates(cloud: TestCloud) {
  const today = localDate(cloud.now(), 'Asia/Kolkata')
  const past = addDays(today, -10)
  return { past, today, from: addDays(past, -5), to: today }
}

async function expectStatus(res: Promise<LightMyRequestResponse>, status: number, label: string) {
  const answer = await res
  expect(answer.statusCode, `${label}: ${answer.body}`).toBe(status)
  return answer.body === '' ? undefined : answer.json()
}

const expectNotFound = (res: LightMyRequestResponse, code: string, label: string) => {
  expect(res.statusCode, `${label}: ${res.body}`).toBe(404)
  if (res.body !== '') expect(res.json().code, label).toBe(code)
}

/** Every page of a listing. */
async function allPages(call: AttendanceCall, path: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = []
  let cursor: string | null = null
  do {
    const sep = path.includes('?') ? '&' : '?'
    const res = await call('GET', `${path}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`)
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200)
    out.push(...res.json().data)
    cursor = res.json().nextCursor
  } while (cursor !== null)
  return out
}

const daysOf = async (call: AttendanceCall, query = '') =>
  (await allPages(call, `/days?limit=200${query}`)) as unknown as Day[]

/**
 * A tenant's attendance, made through its API (the credential needs attendance:admin, or write in
 * the console): `codes` must be active employees of the tenant. `extraShifts` are shift codes only
 * this tenant has; `lock` locks the day before `past`.
 */
export async function seedAttendance(
  cloud: TestCloud,
  call: AttendanceCall,
  codes: string[],
  options: { label: string; extraShifts?: string[]; lock?: boolean },
): Promise<AttendanceSide> {
  const { past, from, to } = attendanceDates(cloud)
  const { label } = options
  const post = (path: string, payload: object, status: number) =>
    expectStatus(call('POST', path, payload), status, `${label} POST ${path}`)
  const shiftCodes = ['GEN', ...(options.extraShifts ?? [])]
  for (const code of shiftCodes)
    await post('/shifts', { code, name: `${label} ${code}`, start: '09:00', end: '18:00' }, 201)
  const assignmentIds = [
    (await post('/assignments', { shiftCode: 'GEN', effectiveFrom: addDays(past, -5) }, 201)).id,
    (await post('/assignments', { group: 'Night', shiftCode: 'GEN', effectiveFrom: addDays(past, -5) }, 201))
      .id,
  ]
  const policyIds = [
    (await post('/policies', { fullDayMinutes: 480 }, 201)).id,
    (await post('/policies', { group: 'Night', fullDayMinutes: 420 }, 201)).id,
  ]
  const holidayIds = [
    (await post('/holidays', { date: addDays(past, -3), name: `${label} holiday` }, 201)).id,
  ]
  const punchIds: string[] = []
  for (const code of codes) {
    for (const [punchType, time] of [
      ['IN', '09:03'],
      ['OUT', '18:07'],
      ['IN', '09:11'],
    ] as const) {
      const day = punchType === 'IN' && time === '09:11' ? addDays(past, -1) : past
      const punch = await post(
        '/punches',
        {
          employeeCode: code,
          punchType,
          punchedAt: `${day}T${time}:00+05:30`,
          source: 'manual',
          reason: `${label}: the terminal was down`,
        },
        201,
      )
      punchIds.push(punch.id)
    }
  }
  // The last punch voided: two kinds of correction.
  await post(`/punches/${punchIds.at(-1)}/void`, { reason: `${label}: entered twice` }, 200)
  await cloud.attendanceRounds()
  const job = await post('/recompute', { from: addDays(past, -1), to: past }, 202)
  await cloud.attendanceRounds()
  expect((await call('GET', `/jobs/${job.id}`)).json().status, label).toBe('done')
  if (options.lock) {
    const day = addDays(past, -1)
    expect((await post('/lock', { from: day, to: day }, 200)).locked, label).toBeGreaterThan(0)
  }
  const days = await daysOf(call, `&from=${from}&to=${to}`)
  expect(days.length, label).toBeGreaterThanOrEqual(codes.length * 2)
  return { call, codes, shiftCodes, policyIds, assignmentIds, holidayIds, jobIds: [job.id], punchIds, days }
}

/** All of a tenant's attendance as it reads it: to compare before and after the other tenant's attempts. */
export async function attendanceSnapshot(cloud: TestCloud, side: AttendanceSide) {
  const { call } = side
  const { from, to } = attendanceDates(cloud)
  const get = async (path: string) => {
    const res = await call('GET', path)
    expect(res.statusCode, `${path}: ${res.body}`).toBe(200)
    return path.includes('.csv') ? res.body : res.json()
  }
  const jobs = []
  for (const id of side.jobIds) jobs.push(await get(`/jobs/${id}`))
  const details = []
  for (const day of side.days) details.push(await get(`/days/${day.employeeCode}/${day.workDate}`))
  return {
    days: await daysOf(call),
    details,
    csv: await get(`/days.csv?from=${from}&to=${to}`),
    summaries: await allPages(call, `/summaries?from=${from}&to=${to}`),
    corrections: await allPages(call, '/corrections?limit=200'),
    shifts: await get('/shifts'),
    policies: await get('/policies'),
    assignments: await get('/assignments'),
    holidays: await get('/holidays'),
    jobs,
  }
}

export interface AttendanceTenants {
  cloud: TestCloud
  a: AttendanceSide
  b: AttendanceSide
  /** An employee code of B's that A never has. */
  bOnly: string
}

type Probe = (t: AttendanceTenants) => Promise<void>

const ids = (rows: unknown) => (rows as { id: string }[]).map((r) => r.id)
const none = (seen: string[], of: string[], label: string) =>
  expect(
    seen.filter((id) => of.includes(id)),
    label,
  ).toEqual([])

/** Of B's days, those on dates A has no day of the same employee code: A must not find them. */
const daysOnlyB = (t: AttendanceTenants) =>
  t.b.days.filter(
    (d) => !t.a.days.some((own) => own.employeeCode === d.employeeCode && own.workDate === d.workDate),
  )

/**
 * For every attendance route under `api` (a route key's prefix: the public or the console API),
 * how A's credential tries to reach B's attendance, and what must happen instead.
 */
export function attendanceProbes(api: string): Record<string, Probe> {
  const A = `${api}/attendance`
  const bShift = (t: AttendanceTenants) => t.b.shiftCodes[1] as string
  const onEach =
    (
      method: Method,
      list: (t: AttendanceTenants) => string[],
      path: (x: string) => string,
      code: string,
      payload?: object,
    ): Probe =>
    async (t) => {
      const of = list(t)
      expect(of.length, path('…')).toBeGreaterThan(0)
      for (const x of of)
        expectNotFound(await t.a.call(method, path(x), payload), code, `${method} ${path(x)}`)
    }
  const listed =
    (path: string, of: (t: AttendanceTenants) => string[]): Probe =>
    async (t) => {
      const res = await t.a.call('GET', path)
      expect(res.statusCode, res.body).toBe(200)
      const seen = ids(res.json().data)
      expect(seen.length, path).toBeGreaterThan(0)
      none(seen, of(t), path)
    }
  const head =
    (path: (t: AttendanceTenants) => string, status = 200): Probe =>
    async (t) => {
      expect((await t.a.call('HEAD', path(t))).statusCode, path(t)).toBe(status)
    }
  const probes: Record<string, Probe> = {
    [`GET ${A}/days`]: async (t) => {
      const bIds = ids(t.b.days)
      const own = await daysOf(t.a.call)
      expect(own.length).toBeGreaterThan(0)
      none(ids(own), bIds, 'days')
      const { from, to } = attendanceDates(t.cloud)
      for (const query of [
        `&employeeCode=${t.bOnly}`,
        `&employeeCode=${t.b.codes[0]}`,
        `&from=${from}&to=${to}`,
        '&state=FINAL',
        '&state=LOCKED',
        '&updatedSince=1970-01-01T00:00:00Z',
      ]) {
        const seen = ids(await daysOf(t.a.call, query))
        none(seen, bIds, query)
        if (query.includes(t.bOnly)) expect(seen, query).toEqual([])
      }
      // A cursor from B's listing, or B's sync, moves A within A's own days only.
      for (const query of ['', '&updatedSince=1970-01-01T00:00:00Z']) {
        const page = (await t.b.call('GET', `/days?limit=1${query}`)).json()
        expect(page.nextCursor, query).not.toBeNull()
        const res = await t.a.call(
          'GET',
          `/days?limit=200${query}&cursor=${encodeURIComponent(page.nextCursor)}`,
        )
        if (res.statusCode === 400) expect(res.json().code).toBe('invalid_cursor')
        else {
          expect(res.statusCode, res.body).toBe(200)
          none(ids(res.json().data), bIds, `B's cursor${query}`)
        }
      }
    },
    [`HEAD ${A}/days`]: head(() => '/days'),
    [`GET ${A}/days.csv`]: async (t) => {
      const { from, to } = attendanceDates(t.cloud)
      const res = await t.a.call('GET', `/days.csv?from=${from}&to=${to}`)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
      // Exactly A's days in the period, one line each: not one of B's.
      const lines = res.body.split('\r\n').filter((l) => l !== '')
      expect(lines[0]).toMatch(/^employeeCode,workDate,/)
      const own = await daysOf(t.a.call, `&from=${from}&to=${to}`)
      expect(lines.slice(1).map((l) => l.split(',').slice(0, 2).join(' '))).toEqual(
        own.map((d) => `${d.employeeCode} ${d.workDate}`),
      )
      const onlyB = await t.a.call('GET', `/days.csv?from=${from}&to=${to}&employeeCode=${t.bOnly}`)
      expect(onlyB.statusCode).toBe(200)
      expect(onlyB.body.split('\r\n').filter((l) => l !== '')).toHaveLength(1)
    },
    [`HEAD ${A}/days.csv`]: async (t) => {
      const { from, to } = attendanceDates(t.cloud)
      const res = await t.a.call('HEAD', `/days.csv?from=${from}&to=${to}`)
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8')
    },
    [`GET ${A}/days/:employeeCode/:workDate`]: async (t) => {
      const onlyB = daysOnlyB(t)
      expect(onlyB.length).toBeGreaterThan(0)
      for (const d of onlyB)
        expectNotFound(
          await t.a.call('GET', `/days/${d.employeeCode}/${d.workDate}`),
          'attendance_day_not_found',
          `B's day ${d.employeeCode} ${d.workDate}`,
        )
      // A day of the code both have, on a date both have one: A's own.
      const both = t.b.days.filter((d) => !onlyB.includes(d))
      expect(both.length).toBeGreaterThan(0)
      for (const d of both) {
        const res = await t.a.call('GET', `/days/${d.employeeCode}/${d.workDate}`)
        expect(res.statusCode, res.body).toBe(200)
        expect(res.json().id).not.toBe(d.id)
        none(ids(res.json().punches), t.b.punchIds, `${d.employeeCode} ${d.workDate} punches`)
      }
    },
    [`HEAD ${A}/days/:employeeCode/:workDate`]: async (t) => {
      const [d] = daysOnlyB(t)
      expect((await t.a.call('HEAD', `/days/${d?.employeeCode}/${d?.workDate}`)).statusCode).toBe(404)
    },
    [`GET ${A}/summaries`]: async (t) => {
      const { from, to } = attendanceDates(t.cloud)
      const period = `from=${from}&to=${to}`
      const all = await allPages(t.a.call, `/summaries?${period}&limit=1`)
      const own = await daysOf(t.a.call, `&${period}`)
      expect(all.map((s) => s.employeeCode)).not.toContain(t.bOnly)
      // The code both have: A's days only, counted.
      const shared = all.find((s) => s.employeeCode === t.b.codes[0])
      expect(shared?.days).toBe(own.filter((d) => d.employeeCode === t.b.codes[0]).length)
      expectNotFound(
        await t.a.call('GET', `/summaries?${period}&employeeCode=${t.bOnly}`),
        'employee_not_found',
        'summary of B only',
      )
      // A cursor from B's page moves A within A's employees only.
      const page = (await t.b.call('GET', `/summaries?${period}&limit=1`)).json()
      expect(page.nextCursor).not.toBeNull()
      const res = await t.a.call('GET', `/summaries?${period}&cursor=${encodeURIComponent(page.nextCursor)}`)
      if (res.statusCode === 400) expect(res.json().code).toBe('invalid_cursor')
      else {
        expect(res.statusCode, res.body).toBe(200)
        expect(res.json().data.map((s: { employeeCode: string }) => s.employeeCode)).not.toContain(t.bOnly)
      }
    },
    [`HEAD ${A}/summaries`]: head((t) => {
      const { from, to } = attendanceDates(t.cloud)
      return `/summaries?from=${from}&to=${to}`
    }),
    // B's employees recomputed through A: a job of A's, which finds B's only employee in no directory
    // of A's and recomputes A's own days of the shared code (B's attendance is compared at the end).
    [`POST ${A}/recompute`]: async (t) => {
      const { from, to } = attendanceDates(t.cloud)
      const job = await expectStatus(
        t.a.call('POST', '/recompute', { from, to, employeeCodes: [t.bOnly, t.b.codes[0]] }),
        202,
        'recompute',
      )
      expect(t.b.jobIds).not.toContain(job.id)
      await t.cloud.attendanceRounds()
      expect((await t.a.call('GET', `/jobs/${job.id}`)).json()).toMatchObject({
        status: 'done',
        employees: 2,
        employeesDone: 2,
      })
    },
    [`GET ${A}/jobs/:id`]: onEach(
      'GET',
      (t) => t.b.jobIds,
      (id) => `/jobs/${id}`,
      'recompute_job_not_found',
    ),
    [`HEAD ${A}/jobs/:id`]: async (t) => {
      expect((await t.a.call('HEAD', `/jobs/${t.b.jobIds[0]}`)).statusCode).toBe(404)
    },
    // A locks `past`, where both have final days: A's own are locked, counted, and none of B's.
    [`POST ${A}/lock`]: async (t) => {
      const { past } = attendanceDates(t.cloud)
      const unlocked = (await daysOf(t.a.call, `&from=${past}&to=${past}`)).filter(
        (d) => d.state !== 'LOCKED',
      )
      expect(unlocked.length).toBeGreaterThan(0)
      expect(t.b.days.filter((d) => d.workDate === past && d.state === 'FINAL').length).toBeGreaterThan(0)
      const res = await expectStatus(t.a.call('POST', '/lock', { from: past, to: past }), 200, 'lock')
      expect(res.locked).toBe(unlocked.length)
    },
    [`POST ${A}/punches/:punchId/void`]: onEach(
      'POST',
      (t) => t.b.punchIds,
      (id) => `/punches/${id}/void`,
      'punch_not_found',
      { reason: 'A voids B' },
    ),
    [`GET ${A}/corrections`]: async (t) => {
      const seen = (await allPages(t.a.call, '/corrections?limit=1')).map((c) => c.punchId as string)
      expect(seen.length).toBeGreaterThan(0)
      none(seen, t.b.punchIds, 'corrections')
      const page = (await t.b.call('GET', '/corrections?limit=1')).json()
      expect(page.nextCursor).not.toBeNull()
      const res = await t.a.call(
        'GET',
        `/corrections?limit=200&cursor=${encodeURIComponent(page.nextCursor)}`,
      )
      if (res.statusCode === 400) expect(res.json().code).toBe('invalid_cursor')
      else {
        expect(res.statusCode, res.body).toBe(200)
        none(
          res.json().data.map((c: { punchId: string }) => c.punchId),
          t.b.punchIds,
          "B's cursor",
        )
      }
    },
    [`HEAD ${A}/corrections`]: head(() => '/corrections'),
    [`GET ${A}/shifts`]: async (t) => {
      const shifts = (await t.a.call('GET', '/shifts')).json().data as { code: string; name: string }[]
      expect(shifts.map((s) => s.code)).not.toContain(bShift(t))
      expect(shifts.filter((s) => s.code === 'GEN').map((s) => s.name)).toEqual([
        expect.stringMatching(/^A /),
      ])
    },
    [`HEAD ${A}/shifts`]: head(() => '/shifts'),
    // A shift of a code only B has, made by A: A's own.
    [`POST ${A}/shifts`]: async (t) => {
      const code = t.b.shiftCodes[2] as string
      const made = await expectStatus(
        t.a.call('POST', '/shifts', { code, name: 'A copy', start: '07:00', end: '15:00' }),
        201,
        'POST shift',
      )
      expect(made).toMatchObject({ code, name: 'A copy' })
    },
    [`GET ${A}/shifts/:code`]: async (t) => {
      expectNotFound(await t.a.call('GET', `/shifts/${bShift(t)}`), 'shift_not_found', "B's shift")
      expect((await t.a.call('GET', '/shifts/GEN')).json().name).toMatch(/^A /)
    },
    [`HEAD ${A}/shifts/:code`]: async (t) => {
      expect((await t.a.call('HEAD', `/shifts/${bShift(t)}`)).statusCode).toBe(404)
    },
    [`PATCH ${A}/shifts/:code`]: async (t) => {
      const body = (code: string) => ({ code, name: 'changed by A', start: '10:00', end: '19:00' })
      expectNotFound(
        await t.a.call('PATCH', `/shifts/${bShift(t)}`, body(bShift(t))),
        'shift_not_found',
        'PATCH',
      )
      // The code both have: A's own changes, B's stays (compared at the end).
      await expectStatus(t.a.call('PATCH', '/shifts/GEN', body('GEN')), 200, 'PATCH GEN')
    },
    [`DELETE ${A}/shifts/:code`]: async (t) => {
      expectNotFound(await t.a.call('DELETE', `/shifts/${bShift(t)}`), 'shift_not_found', 'DELETE')
    },
    [`GET ${A}/policies`]: listed('/policies', (t) => t.b.policyIds),
    [`HEAD ${A}/policies`]: head(() => '/policies'),
    // A policy for a group B has one for too: A's own.
    [`POST ${A}/policies`]: async (t) => {
      const made = await expectStatus(
        t.a.call('POST', '/policies', { group: 'Assembly', fullDayMinutes: 400 }),
        201,
        'POST policy',
      )
      expect(t.b.policyIds).not.toContain(made.id)
    },
    [`GET ${A}/policies/:id`]: onEach(
      'GET',
      (t) => t.b.policyIds,
      (id) => `/policies/${id}`,
      'attendance_policy_not_found',
    ),
    [`HEAD ${A}/policies/:id`]: async (t) => {
      expect((await t.a.call('HEAD', `/policies/${t.b.policyIds[0]}`)).statusCode).toBe(404)
    },
    [`PATCH ${A}/policies/:id`]: onEach(
      'PATCH',
      (t) => t.b.policyIds,
      (id) => `/policies/${id}`,
      'attendance_policy_not_found',
      { fullDayMinutes: 60 },
    ),
    [`DELETE ${A}/policies/:id`]: onEach(
      'DELETE',
      (t) => t.b.policyIds,
      (id) => `/policies/${id}`,
      'attendance_policy_not_found',
    ),
    [`GET ${A}/assignments`]: async (t) => {
      await listed('/assignments', (x) => x.b.assignmentIds)(t)
      const res = await t.a.call('GET', `/assignments?employeeCode=${t.bOnly}`)
      expect(res.json().data).toEqual([])
    },
    [`HEAD ${A}/assignments`]: head(() => '/assignments'),
    // B's shift, assigned by A: no such shift in A.
    [`POST ${A}/assignments`]: async (t) => {
      const { past } = attendanceDates(t.cloud)
      expectNotFound(
        await t.a.call('POST', '/assignments', { shiftCode: bShift(t), effectiveFrom: past }),
        'shift_not_found',
        "B's shift assigned",
      )
    },
    [`DELETE ${A}/assignments/:id`]: onEach(
      'DELETE',
      (t) => t.b.assignmentIds,
      (id) => `/assignments/${id}`,
      'shift_assignment_not_found',
    ),
    [`GET ${A}/holidays`]: listed('/holidays', (t) => t.b.holidayIds),
    [`HEAD ${A}/holidays`]: head(() => '/holidays'),
    // A holiday on B's holiday's date, for a group: A's own.
    [`POST ${A}/holidays`]: async (t) => {
      const { past } = attendanceDates(t.cloud)
      const made = await expectStatus(
        t.a.call('POST', '/holidays', { date: addDays(past, -3), name: 'A too', group: 'Night' }),
        201,
        'POST holiday',
      )
      expect(t.b.holidayIds).not.toContain(made.id)
    },
    [`DELETE ${A}/holidays/:id`]: onEach(
      'DELETE',
      (t) => t.b.holidayIds,
      (id) => `/holidays/${id}`,
      'holiday_not_found',
    ),
  }
  return probes
}

/** The console's manual punch: B's only employee is not found; the code both have is A's own employee. */
export const manualPunchProbe: Probe = async (t) => {
  const { past } = attendanceDates(t.cloud)
  const body = (employeeCode: string) => ({
    employeeCode,
    punchType: 'IN',
    punchedAt: `${past}T08:00:00+05:30`,
    source: 'manual',
    reason: 'A corrects',
  })
  const refused = await t.a.call('POST', '/punches', body(t.bOnly))
  expect(refused.statusCode, refused.body).toBe(422)
  expect(refused.json().code).toBe('employee_not_found')
  const made = await expectStatus(t.a.call('POST', '/punches', body(t.b.codes[0] as string)), 201, 'manual')
  expect(t.b.punchIds).not.toContain(made.id)
}
