/**
 * What the single-punch path promises, checked against `hajri-cloud serve` as real processes, on
 * SQLite and on PostgreSQL: whatever is done to make the path fast must keep these.
 * - **Durable on 201.** Punches are posted 16 at a time and the cloud is killed with SIGKILL once a
 *   number of them were answered 201. Every answered punch is in the database with its
 *   attendance.punch.created event (the outbox is written in the same transaction). Restarted, the
 *   cloud takes every punch again, answered or not, and stores each exactly once.
 * - **Exactly once by externalId** (PostgreSQL, two instances on one database): copies of the same
 *   punches go to both instances at once; each externalId is stored once, one request gets 201 and
 *   the others replay the same punch, and one event is written per punch.
 * - **Revocation on the next request, on every instance**: an API key revoked through one instance,
 *   and an access token revoked through one instance, are refused by the other on its next request,
 *   however recently that instance let them in from its credential cache: its punch route, and the
 *   reads whose statements check a cached credential (employees, the punch log, attendance days).
 * - **Tenant scoping across instances**: two tenants with the same employee codes and the same
 *   externalIds each get their own punches, and neither can read the other's.
 *
 * PostgreSQL is at HAJRI_TEST_POSTGRES_URL; without it those cases are skipped with the reason, and
 * fail under HAJRI_TEST_REQUIRE_ALL=1. HAJRI_E2E_KEEP=1 keeps the directory with the instances' logs.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import type { DatabaseKind } from '../../support/cloud-harness.js'
import { employee, TEST_ACTOR } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { freePort } from '../../support/e2e-kit.js'
import { postgresAvailability } from '../../support/services.js'
import { openWebhookFixture, type WebhookFixture } from './webhook-fixture.js'

const postgres = await postgresAvailability()

const PUNCHES = '/api/public/v1/attendance/punches'
const EMPLOYEES = '/api/public/v1/employees'
/** Requests in flight at once: enough that the kill lands among unanswered ones. */
const CONCURRENCY = 16
/** 201s seen before the kill. */
const KILL_AFTER = 120

interface Answer {
  status: number
  id?: string
  replayed: boolean
}

/** One POST of a punch; a connection the kill cut is `status: 0`, an unknown outcome. */
async function postPunch(baseUrl: string, token: string, punch: object): Promise<Answer> {
  try {
    const res = await fetch(`${baseUrl}${PUNCHES}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(punch),
      signal: AbortSignal.timeout(30_000),
    })
    const body = (await res.json()) as { id?: string }
    return { status: res.status, id: body.id, replayed: res.headers.get('idempotent-replayed') === 'true' }
  } catch {
    return { status: 0, replayed: false }
  }
}

async function get(baseUrl: string, token: string, path: string): Promise<number> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })
  await res.arrayBuffer()
  return res.status
}

/** Runs `work` over `items`, `concurrency` at a time, until done or `stop()` says so. */
async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
  stop: () => boolean = () => false,
) {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length && !stop()) await work(items[next++] as T)
    }),
  )
}

/** The punches and attendance.punch.created events the database holds for a tenant. */
async function stored(fixture: WebhookFixture, tenantId: string) {
  const { db } = fixture.database
  const punches = await db
    .selectFrom('punches')
    .select(['id', 'external_id', 'employee_code', 'punched_at'])
    .where('tenant_id', '=', tenantId)
    .execute()
  const events = await db
    .selectFrom('webhook_events')
    .select('body')
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'attendance.punch.created')
    .execute()
  const eventPunchIds = events.map((e) => (JSON.parse(e.body) as { data: { id: string } }).data.id)
  return { punches, eventPunchIds }
}

const punchOf = (fixture: WebhookFixture, n: number, prefix: string) => ({
  employeeCode: fixture.employeeCodes[n % fixture.employeeCodes.length],
  punchType: n % 2 === 0 ? 'IN' : 'OUT',
  // Within the backfill window, a second apart.
  punchedAt: new Date(Date.now() - 3_600_000 - n * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
  deviceId: 'gate-1',
  externalId: `${prefix}-${n}`,
})

const KINDS: { kind: DatabaseKind; skipReason: string | undefined }[] = [
  { kind: 'sqlite', skipReason: undefined },
  { kind: 'postgres', skipReason: postgres.skipReason },
]

describe.each(KINDS)('the single-punch path [$kind]', ({ kind, skipReason }) => {
  let fixture: WebhookFixture
  let dir = ''
  const instances: CloudProcess[] = []

  const startInstance = async (name: string) => {
    const instance = new CloudProcess({
      env: {
        ...fixture.serveEnv,
        HAJRI_PORT: String(await freePort()),
        // The cloud as production runs it: request logging on.
        HAJRI_LOG_LEVEL: 'info',
      },
      logPath: join(dir, `${name}.log`),
    })
    instances.push(instance)
    await instance.start()
    return instance
  }

  beforeAll(async () => {
    if (skipReason) return
    fixture = await openWebhookFixture(kind, { receiverUrl: () => '', endpointPaths: [], employees: 40 })
    dir = await mkdtemp(join(tmpdir(), `hajri-punch-guarantees-${kind}-`))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(instances.map((i) => i.dispose()))
    await fixture?.close()
    if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${dir}`)
    else if (dir) await rm(dir, { recursive: true, force: true })
  })

  it.skipIf(skipReason !== undefined)(
    `keeps every punch answered 201 through a SIGKILL, and stores each once when they are all sent again${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    { timeout: 180_000 },
    async () => {
      const cloud = await startInstance('durability')
      const punches = Array.from({ length: 2000 }, (_, n) => punchOf(fixture, n, 'kill'))
      const answers = new Map<string, Answer>()
      let created = 0
      let killed = false
      await pool(
        punches,
        CONCURRENCY,
        async (punch) => {
          const answer = await postPunch(cloud.url, fixture.apiKey, punch)
          answers.set(punch.externalId, answer)
          if (answer.status === 201 && ++created >= KILL_AFTER && !killed) killed = cloud.killNow()
        },
        () => killed,
      )
      await cloud.whenExited()
      expect(killed, 'the cloud was killed mid-stream').toBe(true)

      const acknowledged = [...answers].filter(([, a]) => a.status === 201)
      expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER)
      // Nothing but 201s and cut connections: no punch was refused on the way.
      expect(new Set([...answers.values()].map((a) => a.status))).toEqual(
        new Set([...answers.values()].some((a) => a.status === 0) ? [201, 0] : [201]),
      )
      const before = await stored(fixture, fixture.tenant.id)
      const byExternalId = new Map(before.punches.map((p) => [p.external_id, p]))
      const events = new Set(before.eventPunchIds)
      for (const [externalId, answer] of acknowledged) {
        expect(byExternalId.get(externalId)?.id, `${externalId}, answered 201`).toBe(answer.id)
        expect(events.has(answer.id as string), `the event of ${externalId}`).toBe(true)
      }
      // The outbox commits with the punch: no punch without its event, no event without its punch.
      expect(before.eventPunchIds.sort()).toEqual(before.punches.map((p) => p.id).sort())

      // Restarted, everything sent (answered or cut) is sent again: each is stored once.
      await cloud.start()
      const sent = punches.filter((p) => answers.has(p.externalId))
      const again = new Map<string, Answer>()
      await pool(sent, CONCURRENCY, async (punch) => {
        again.set(punch.externalId, await postPunch(cloud.url, fixture.apiKey, punch))
      })
      for (const [externalId, answer] of acknowledged) {
        expect(again.get(externalId), externalId).toEqual({ status: 201, id: answer.id, replayed: true })
      }
      expect([...again.values()].every((a) => a.status === 201)).toBe(true)
      const after = await stored(fixture, fixture.tenant.id)
      expect(after.punches).toHaveLength(sent.length)
      expect(new Set(after.punches.map((p) => p.external_id)).size).toBe(sent.length)
      expect(after.eventPunchIds.sort()).toEqual(after.punches.map((p) => p.id).sort())
      await cloud.stop()
    },
  )

  // What two instances share is PostgreSQL's alone: SQLite has one process per database.
  if (kind !== 'postgres') return
  const twoInstances = async () => [await startInstance('a'), await startInstance('b')] as const

  it.skipIf(skipReason !== undefined)(
    `stores each externalId once when copies reach two instances at the same time${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    { timeout: 180_000 },
    async () => {
      const [a, b] = await twoInstances()
      const distinct = Array.from({ length: 60 }, (_, n) => punchOf(fixture, n, 'twice'))
      const COPIES = 6
      // Copies interleaved, so the same punch is in flight on both instances together.
      const requests = distinct.flatMap((punch) =>
        Array.from({ length: COPIES }, (_, copy) => ({ punch, url: copy % 2 === 0 ? a.url : b.url })),
      )
      const answers = new Map<string, Answer[]>()
      await pool(requests, 24, async ({ punch, url }) => {
        const answer = await postPunch(url, fixture.apiKey, punch)
        answers.set(punch.externalId, [...(answers.get(punch.externalId) ?? []), answer])
      })
      const { punches, eventPunchIds } = await stored(fixture, fixture.tenant.id)
      const byExternalId = new Map(punches.map((p) => [p.external_id, p]))
      for (const punch of distinct) {
        const got = answers.get(punch.externalId) ?? []
        const row = byExternalId.get(punch.externalId)
        expect(got, punch.externalId).toHaveLength(COPIES)
        expect(
          got.every((x) => x.status === 201 && x.id === row?.id),
          JSON.stringify(got),
        ).toBe(true)
        expect(
          got.filter((x) => !x.replayed),
          `first stores of ${punch.externalId}`,
        ).toHaveLength(1)
      }
      const twice = punches.filter((p) => p.external_id?.startsWith('twice-'))
      expect(twice).toHaveLength(distinct.length)
      const ids = new Set(twice.map((p) => p.id))
      expect(eventPunchIds.filter((id) => ids.has(id)).sort()).toEqual([...ids].sort())
      await Promise.all([a.stop(), b.stop()])
    },
  )

  it.skipIf(skipReason !== undefined)(
    `refuses a revoked API key and a revoked access token on the next request to the other instance${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    { timeout: 120_000 },
    async () => {
      const [a, b] = await twoInstances()
      const tenantId = fixture.tenant.id
      const scopes = ['attendance:read', 'attendance:write', 'employees:read'] as const
      const reader = await fixture.services.apiKeys.create(
        tenantId,
        { scopes: [...scopes], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
        TEST_ACTOR,
      )
      const employeeReads = [
        `${EMPLOYEES}/${fixture.employeeCodes[0]}`,
        `${EMPLOYEES}?limit=1`,
        '/api/public/v1/attendance/days?limit=1',
      ]
      // Both instances have just let the key in, several times, b to store punches and read employees:
      // those routes take it from b's credential cache now (their statements check it is still live).
      for (let i = 0; i < 5; i++) {
        expect(await get(a.url, reader.key, `${PUNCHES}?limit=1`)).toBe(200)
        expect(await get(b.url, reader.key, `${PUNCHES}?limit=1`)).toBe(200)
        expect((await postPunch(b.url, reader.key, punchOf(fixture, i, `cached-key-${i}`))).status).toBe(201)
        for (const path of employeeReads) expect(await get(b.url, reader.key, path)).toBe(200)
      }
      const revoke = await fetch(`${a.url}/api/console/v1/api-keys/${reader.id}/revoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.adminToken}` },
      })
      expect(revoke.status, await revoke.text()).toBe(200)
      expect(await get(b.url, reader.key, `${PUNCHES}?limit=1`)).toBe(401)
      for (const path of employeeReads) expect(await get(b.url, reader.key, path)).toBe(401)
      expect((await postPunch(b.url, reader.key, punchOf(fixture, 0, 'revoked'))).status).toBe(401)
      expect(await get(a.url, reader.key, `${PUNCHES}?limit=1`)).toBe(401)

      // An access token of an OAuth app, granted and revoked through instance a, used on b.
      const app = await fixture.services.oauthApps.create(
        tenantId,
        { name: 'payroll sync', scopes: [...scopes] },
        TEST_ACTOR,
      )
      const client = { client_id: app.clientId, client_secret: app.clientSecret }
      const granted = await fetch(`${a.url}/api/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'client_credentials', ...client }),
      })
      const { access_token: token } = (await granted.json()) as { access_token: string }
      expect(granted.status).toBe(200)
      for (let i = 0; i < 5; i++) {
        expect(await get(b.url, token, `${PUNCHES}?limit=1`)).toBe(200)
        expect((await postPunch(b.url, token, punchOf(fixture, i, `cached-token-${i}`))).status).toBe(201)
        for (const path of employeeReads) expect(await get(b.url, token, path)).toBe(200)
      }
      const revoked = await fetch(`${a.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, ...client }),
      })
      expect(revoked.status, await revoked.text()).toBe(200)
      expect(await get(b.url, token, `${PUNCHES}?limit=1`)).toBe(401)
      for (const path of employeeReads) expect(await get(b.url, token, path)).toBe(401)
      expect((await postPunch(b.url, token, punchOf(fixture, 0, 'revoked-token'))).status).toBe(401)
      await Promise.all([a.stop(), b.stop()])
    },
  )

  it.skipIf(skipReason !== undefined)(
    `keeps two tenants with the same codes and externalIds apart, on both instances${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    { timeout: 120_000 },
    async () => {
      const [a, b] = await twoInstances()
      const { services } = fixture
      const other = await services.tenants.create({
        name: 'Second works',
        adminEmail: 'owner@second-works.example.test',
        backfillDays: 30,
      })
      // The same codes, but E0001 only in the first tenant: the second cannot punch for it.
      await services.employees.upsert(
        other.tenantId,
        fixture.employeeCodes.slice(1).map((code) => employee(code)),
      )
      const scopes = ['attendance:read', 'attendance:write', 'employees:read'] as const
      const keyOf = async (tenantId: string) =>
        (
          await services.apiKeys.create(
            tenantId,
            { scopes: [...scopes], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
            TEST_ACTOR,
          )
        ).key
      const firstKey = await keyOf(fixture.tenant.id)
      const secondKey = await keyOf(other.tenantId)
      const shared = Array.from({ length: 20 }, (_, n) => punchOf(fixture, n + 1, 'shared'))
      const answers: { tenant: 'first' | 'second'; externalId: string; answer: Answer }[] = []
      await pool(
        shared.flatMap((punch) => [
          { tenant: 'first' as const, punch, url: a.url, key: firstKey },
          { tenant: 'second' as const, punch, url: b.url, key: secondKey },
        ]),
        8,
        async ({ tenant, punch, url, key }) => {
          answers.push({ tenant, externalId: punch.externalId, answer: await postPunch(url, key, punch) })
        },
      )
      // Each tenant stored each punch anew: the other tenant's externalId is no replay.
      expect(answers.every((x) => x.answer.status === 201 && !x.answer.replayed)).toBe(true)
      const ids = (tenant: string) => answers.filter((x) => x.tenant === tenant).map((x) => x.answer.id)
      expect(new Set([...ids('first'), ...ids('second')]).size).toBe(2 * shared.length)

      // E0001 is the first tenant's alone.
      const foreign = await postPunch(b.url, secondKey, { ...punchOf(fixture, 0, 'foreign') })
      expect(foreign.status).toBe(422)
      // Neither reads the other's employee, whose code only the first tenant has, though both
      // instances let the second tenant's key in from their caches by now.
      const firstOnly = `${EMPLOYEES}/${fixture.employeeCodes[0]}`
      expect(await get(a.url, firstKey, firstOnly)).toBe(200)
      for (const url of [a.url, b.url]) expect(await get(url, secondKey, firstOnly)).toBe(404)
      const employeePage = await fetch(`${b.url}${EMPLOYEES}?limit=200`, {
        headers: { authorization: `Bearer ${secondKey}` },
      })
      const listedCodes = ((await employeePage.json()) as { data: { employeeCode: string }[] }).data.map(
        (e) => e.employeeCode,
      )
      expect(listedCodes.sort()).toEqual(fixture.employeeCodes.slice(1).sort())
      // Neither reads the other's punch, by id or in its list.
      const theirs = ids('second')[0] as string
      expect(await get(a.url, firstKey, `${PUNCHES}/${theirs}`)).toBe(404)
      expect(await get(b.url, secondKey, `${PUNCHES}/${theirs}`)).toBe(200)
      const listed = await fetch(`${a.url}${PUNCHES}?limit=200`, {
        headers: { authorization: `Bearer ${firstKey}` },
      })
      const page = (await listed.json()) as { data: { id: string }[] }
      const second = new Set(ids('second'))
      expect(page.data.length).toBeGreaterThan(0)
      expect(page.data.filter((p) => second.has(p.id))).toEqual([])
      const secondRows = await fixture.database.db
        .selectFrom('punches')
        .select('id')
        .where('tenant_id', '=', other.tenantId)
        .execute()
      expect(secondRows.map((r) => r.id).sort()).toEqual([...second].sort())
      await Promise.all([a.stop(), b.stop()])
    },
  )
})
