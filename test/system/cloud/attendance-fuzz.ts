/**
 * What test/system/cloud/route-fuzz.ts needs for the attendance routes, public and console alike:
 * shifts, policies, assignments and holidays to change (kept) and to delete (a pool per route, so
 * that the public route's deletions leave the console's something to find), a recompute job, dates
 * near today for the periods (`from`..`to` within the range limits more often than not), and a
 * manual punch's `source` and `reason`.
 *
 * Recompute and lock go to a tenant of their own per route: a tenant may have three jobs waiting at
 * once, and a locked period would refuse the voids the punch routes fuzz in the main tenant.
 */
import fc from 'fast-check'
import { expect } from 'vitest'
import { addDays, localDate } from '../../../cloud/features/attendance/work-dates.js'
import type { RouteRecord } from '../../../cloud/plugins/route-table.js'
import { SCOPES } from '../../../shared/scopes.js'
import { formatTimestamp, nowMicros } from '../../../shared/time.js'
import { bearer, TEST_ACTOR, type TestCloud } from '../../support/cloud-harness.js'
import type { FuzzContext } from '../../support/request-arbitrary.js'

const SECOND = 1_000_000
const APIS = ['/api/public/v1', '/api/console/v1'] as const
/** Objects each deleting route starts with: more than its near-valid requests can find by chance. */
const DELETABLE = 12
const ID = (prefix: string) => new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`)

export const isAttendanceRoute = (route: RouteRecord): boolean =>
  APIS.some((api) => route.url.startsWith(`${api}/attendance/`))

/** The routes that change a whole period of a tenant's days. */
const isPeriodRoute = (route: RouteRecord): boolean =>
  route.method === 'POST' && /\/attendance\/(recompute|lock)$/.test(route.url)

/** The full day of the policy kept for changing: a half day up to it is consistent. */
const KEPT_FULL_DAY = 450

/**
 * Near-valid policy fields. Drawn alone from the schema, most policies break a rule the schema cannot
 * state (a half day longer than the full day, a weekly off day given twice, another group for the
 * kept policy), and a thousand requests could pass with none accepted: these keep most of them
 * consistent, and the mutations still break them.
 */
function policyHints(route: RouteRecord): FuzzContext['hints'] {
  const mostly = <T>(valid: fc.Arbitrary<T>, any: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: any })
  return {
    fullDayMinutes: mostly(fc.integer({ min: KEPT_FULL_DAY, max: 1440 }), fc.integer({ min: 0, max: 1440 })),
    halfDayMinutes: mostly(fc.integer({ min: 0, max: KEPT_FULL_DAY }), fc.integer({ min: 0, max: 1440 })),
    weeklyOffDays: mostly(
      fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }),
      fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 7 }),
    ),
    // A policy keeps its group: the kept one's, when changing it.
    ...(route.method === 'PATCH'
      ? { group: mostly(fc.constant('fuzz-kept'), fc.string({ maxLength: 12 })) }
      : {}),
  }
}

export interface AttendanceFuzzFixtures {
  /** The credentials of the tenants set up here: no response may echo one. */
  secrets: string[]
  /** `base` (the route's public or console context) with the attendance hints of `route`. */
  contextFor(route: RouteRecord, base: FuzzContext): FuzzContext
}

export interface MainTenant {
  /** The main tenant's API key, access token and admin token, as the base contexts carry them. */
  apiKey: string
  accessToken: string
  adminToken: string
  /** An active employee, whose punches the void routes void. */
  employeeCode: string
}

/** Deletable objects of each kind, by route URL; and the ones kept for reads and updates. */
async function configObjects(cloud: TestCloud, tenantId: string) {
  const config = cloud.services.attendanceConfig
  const past = addDays(localDate(nowMicros(), 'Asia/Kolkata'), -30)
  const keptShift = (
    await config.createShift(tenantId, { code: 'FUZZ-GEN', start: '09:00', end: '18:00' }, TEST_ACTOR)
  ).code
  await config.createShift(tenantId, { code: 'FUZZ-NIGHT', start: '22:00', end: '06:00' }, TEST_ACTOR)
  const keptPolicy = (
    await config.createPolicy(tenantId, { group: 'fuzz-kept', fullDayMinutes: KEPT_FULL_DAY }, TEST_ACTOR)
  ).id
  const deletable = { shifts: new Map<string, string[]>(), policies: new Map<string, string[]>() }
  const assignments = new Map<string, string[]>()
  const holidays = new Map<string, string[]>()
  for (const [a, api] of APIS.entries()) {
    const shifts: string[] = []
    const policies: string[] = []
    const assigned: string[] = []
    const holidayIds: string[] = []
    for (let i = 0; i < DELETABLE; i++) {
      const tag = `${a}-${i}`
      // A shift no assignment uses, and a policy, an assignment and a holiday of a group no one is in.
      shifts.push(
        (
          await config.createShift(
            tenantId,
            { code: `FUZZ-DEL-${tag}`, start: '08:00', end: '16:00' },
            TEST_ACTOR,
          )
        ).code,
      )
      policies.push((await config.createPolicy(tenantId, { group: `fuzz-del-${tag}` }, TEST_ACTOR)).id)
      assigned.push(
        (
          await config.createAssignment(
            tenantId,
            { group: `fuzz-del-${tag}`, shiftCode: keptShift, effectiveFrom: past },
            TEST_ACTOR,
          )
        ).id,
      )
      holidayIds.push(
        (
          await config.createHoliday(
            tenantId,
            { date: addDays(past, i), name: `Fuzz holiday ${tag}`, group: `fuzz-del-${tag}` },
            TEST_ACTOR,
          )
        ).id,
      )
    }
    deletable.shifts.set(`${api}/attendance/shifts/:code`, shifts)
    deletable.policies.set(`${api}/attendance/policies/:id`, policies)
    assignments.set(`${api}/attendance/assignments/:id`, assigned)
    holidays.set(`${api}/attendance/holidays/:id`, holidayIds)
  }
  return { keptShift, keptPolicy, deletable, assignments, holidays }
}

/** A tenant of its own for one period route, with a key of every scope and an admin token. */
async function periodTenant(cloud: TestCloud): Promise<{ apiKey: string; adminToken: string }> {
  const tenantId = await cloud.createTenant()
  return {
    apiKey: await cloud.createApiKey(tenantId, [...SCOPES]),
    adminToken: await cloud.createAdminToken(tenantId),
  }
}

export async function setUpAttendanceFuzz(
  cloud: TestCloud,
  tenantId: string,
  main: MainTenant,
): Promise<AttendanceFuzzFixtures> {
  const objects = await configObjects(cloud, tenantId)
  // A job to read: queued, since no worker runs in the fuzzed cloud.
  const today = localDate(nowMicros(), 'Asia/Kolkata')
  const job = await cloud.app.inject({
    method: 'POST',
    url: '/api/console/v1/attendance/recompute',
    headers: bearer(main.adminToken),
    payload: { from: addDays(today, -3), to: addDays(today, -1) },
  })
  expect(job.statusCode, job.body).toBe(202)
  const jobId = job.json().id as string

  // Punches to void, a pool per route: each can be voided once.
  const voidable = new Map<string, string[]>()
  for (const [a, api] of APIS.entries()) {
    const ids: string[] = []
    for (let i = 0; i < DELETABLE; i++) {
      const res = await cloud.app.inject({
        method: 'POST',
        url: '/api/public/v1/attendance/punches',
        headers: bearer(main.apiKey),
        payload: {
          employeeCode: main.employeeCode,
          punchType: i % 2 === 0 ? 'IN' : 'OUT',
          punchedAt: formatTimestamp(nowMicros() - (a * DELETABLE + i + 1) * 600 * SECOND),
          externalId: `fuzz-void-${a}-${i}`,
        },
      })
      expect(res.statusCode, res.body).toBe(201)
      ids.push(res.json().id)
    }
    voidable.set(`${api}/attendance/punches/:punchId/void`, ids)
  }
  // The days of every punch so far, and the job done.
  await cloud.attendanceRounds()

  const periodTenants = new Map<string, { apiKey: string; adminToken: string }>()
  for (const api of APIS)
    for (const path of ['recompute', 'lock'])
      periodTenants.set(`${api}/attendance/${path}`, await periodTenant(cloud))

  // Past dates (a period that has ended, within every range limit) and a few to come: `from` and
  // `to` are drawn apart, so about half the periods run backwards and are refused.
  const date = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 2, max: 40 }).map((d) => addDays(today, -d)) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 3 }).map((d) => addDays(today, d)) },
  )
  const recent = fc.integer({ min: 0, max: 5 }).map((d) => addDays(today, -d))
  const idFrom = (pool: string[], prefix: string) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pool) },
      { weight: 1, arbitrary: fc.stringMatching(ID(prefix)) },
    )
  const codeFrom = (pool: string[]) =>
    fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...pool) },
      { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/) },
    )

  /** The hint for `code` and `id`, by route: what its path names, kept or deletable. */
  function pathHints(route: RouteRecord): FuzzContext['hints'] {
    const { method, url } = route
    const deleting = method === 'DELETE'
    if (url.endsWith('/shifts/:code')) {
      const pool = deleting ? (objects.deletable.shifts.get(url) ?? []) : [objects.keptShift]
      return { code: codeFrom(pool) }
    }
    if (url.endsWith('/policies/:id')) {
      const pool = deleting ? (objects.deletable.policies.get(url) ?? []) : [objects.keptPolicy]
      return { id: idFrom(pool, 'pol') }
    }
    if (url.endsWith('/assignments/:id')) return { id: idFrom(objects.assignments.get(url) ?? [], 'asg') }
    if (url.endsWith('/holidays/:id')) return { id: idFrom(objects.holidays.get(url) ?? [], 'hol') }
    if (url.endsWith('/jobs/:id')) return { id: idFrom([jobId], 'job') }
    if (url.endsWith('/void')) return { punchId: idFrom(voidable.get(url) ?? [], 'pun') }
    return {}
  }

  /** A period route's credentials: its own tenant's, wherever the base context has the main tenant's. */
  function authorizationFor(route: RouteRecord, base: FuzzContext): FuzzContext['authorization'] {
    const own = periodTenants.get(route.url)
    if (!isPeriodRoute(route) || own === undefined) return base.authorization
    return base.authorization.map((value) =>
      value
        ?.replaceAll(main.apiKey, own.apiKey)
        .replaceAll(main.accessToken, own.apiKey)
        .replaceAll(main.adminToken, own.adminToken),
    )
  }

  return {
    secrets: [...periodTenants.values()].flatMap((t) => [t.apiKey, t.adminToken]),
    contextFor(route, base) {
      if (!isAttendanceRoute(route)) return base
      const manual = route.method === 'POST' && route.url.endsWith('/attendance/punches')
      return {
        ...base,
        authorization: authorizationFor(route, base),
        hints: {
          ...base.hints,
          from: date,
          to: date,
          date,
          // The days the worker made: of the punches of the last few days.
          workDate: fc.oneof(recent, date),
          effectiveFrom: date,
          effectiveTo: fc.option(date),
          shiftCode: codeFrom([objects.keptShift, 'FUZZ-NIGHT']),
          ...pathHints(route),
          ...(route.url.includes('/attendance/policies') ? policyHints(route) : {}),
          ...(manual
            ? {
                source: fc.oneof({ weight: 4, arbitrary: fc.constant('manual') }, fc.constant('hajri-agent')),
                reason: fc.constantFrom('Forgot to punch', 'Card reader down at gate 2', 'मशीन बंद'),
              }
            : {}),
        },
      }
    },
  }
}
