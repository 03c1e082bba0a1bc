/**
 * A security review of the running system found:
 * #12: duplicate punch batches sent under fresh Idempotency-Keys created nothing, yet each stored
 * its whole response (about 131 KB for 500 punches) for 24 hours: one key at its default rate limit
 * could store about 79 MB a minute. A stored response must be compact, and one credential must not
 * keep more than its allowance.
 * #15: console POSTs ignored Idempotency-Key (three retries made three API keys) while the docs
 * said the header "makes any POST safe to retry". Where the key is not honoured, it is refused.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { MAX_BATCH_PUNCHES } from '../../../shared/punch.js'
import { bearer, describeEachDatabase, employee, type TestCloud } from '../../support/cloud-harness.js'
import {
  appRouteTable,
  CONSOLE,
  codeOf,
  createTenantFixture,
  ownRequest,
  PUBLIC,
  routeKey,
  send,
  type TenantFixture,
} from './security-kit.js'

const BATCH = `${PUBLIC}/attendance/punches/batch`
/** The routes that honour Idempotency-Key: docs/integrators/api.md names exactly these. */
const HONOURING = [`POST ${PUBLIC}/attendance/punches`, `POST ${BATCH}`]
const routes = await appRouteTable()
/** The smallest allowance the setting takes: a few compressed batch responses. */
const ALLOWANCE = 64 * 1024

/** A full batch of punches no one has sent: random externalIds, spread over the last day. */
function freshPunches(codes: readonly string[]) {
  const now = Date.now()
  return Array.from({ length: MAX_BATCH_PUNCHES }, (_, i) => ({
    employeeCode: codes[i % codes.length] as string,
    punchType: i % 2 === 0 ? 'IN' : 'OUT',
    punchedAt: new Date(now - (i + 1) * 97_000 - Math.floor(Math.random() * 60_000)).toISOString(),
    deviceId: `gate-${i % 7}`,
    externalId: `zk-${randomBytes(9).toString('base64url')}`,
  }))
}

/** What a tenant's stored Idempotency-Key rows hold: key, fingerprint and stored response. */
async function storedBytes(cloud: TestCloud, tenantId: string): Promise<number> {
  const row = await cloud.database.db
    .selectFrom('idempotency_keys')
    .select(
      sql<string>`sum(length(idempotency_key) + length(fingerprint) + length(response_body))`.as('bytes'),
    )
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow()
  return Number(row.bytes ?? 0)
}

async function responseBodyLength(cloud: TestCloud, tenantId: string, key: string): Promise<number> {
  const row = await cloud.database.db
    .selectFrom('idempotency_keys')
    .select(sql<string>`length(response_body)`.as('length'))
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', key)
    .executeTakeFirstOrThrow()
  return Number(row.length)
}

describeEachDatabase('security review #12: stored Idempotency-Key responses', (cloud) => {
  let capped: FastifyInstance
  const codes = Array.from({ length: 40 }, (_, i) => `E${String(i).padStart(4, '0')}`)

  async function tenantWithEmployees(): Promise<string> {
    const tenantId = await cloud.createTenant({ backfillDays: 30 })
    await cloud.upsertEmployees(
      tenantId,
      codes.map((c) => employee(c)),
    )
    return tenantId
  }

  const post = (app: FastifyInstance, apiKey: string, key: string | undefined, punches: unknown[]) =>
    app.inject({
      method: 'POST',
      url: BATCH,
      headers: { ...bearer(apiKey), ...(key === undefined ? {} : { 'idempotency-key': key }) },
      payload: { punches },
    })

  beforeAll(async () => {
    // The allowance is the server's (HAJRI_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL): an app of its own.
    capped = await buildApp({
      config: {
        bodyLimitBytes: 1024 * 1024,
        trustProxy: false,
        logLevel: 'silent',
        idempotencyMaxBytesPerCredential: ALLOWANCE,
      },
      database: cloud.database,
      logger: false,
      closeDatabase: false,
    })
    await capped.ready()
  })
  afterAll(async () => {
    await capped?.close()
  })

  it('security review #12: a duplicate 500-punch batch under a fresh key stores its response compactly and replays it exactly', async () => {
    const tenantId = await tenantWithEmployees()
    const apiKey = await cloud.createApiKey(tenantId)
    const punches = freshPunches(codes)

    const firstKey = `first-${randomBytes(4).toString('hex')}`
    const first = await post(cloud.app, apiKey, firstKey, punches)
    expect(first.statusCode).toBe(200)
    expect(first.json().summary).toEqual({ received: 500, created: 500, duplicate: 0, rejected: 0 })

    const key = `dup-${randomBytes(4).toString('hex')}`
    const duplicate = await post(cloud.app, apiKey, key, punches)
    expect(duplicate.statusCode).toBe(200)
    expect(duplicate.json().summary).toEqual({ received: 500, created: 0, duplicate: 500, rejected: 0 })
    const responseBytes = Buffer.byteLength(duplicate.body)
    expect(responseBytes).toBeGreaterThan(100_000)

    // Stored as sent, the response took as many bytes as it has; compactly, a small part of them.
    const stored = await responseBodyLength(cloud, tenantId, key)
    expect(stored, `${stored} bytes stored for a ${responseBytes}-byte response`).toBeLessThan(
      responseBytes / 4,
    )

    // The replay is the original answer, byte for byte.
    const replay = await post(cloud.app, apiKey, key, punches)
    expect(replay.statusCode).toBe(200)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(duplicate.body)
    const firstReplay = await post(cloud.app, apiKey, firstKey, punches)
    expect(firstReplay.body).toBe(first.body)
  })

  it('security review #12: one credential cannot keep more than its allowance of stored responses', async () => {
    const tenantId = await tenantWithEmployees()
    const apiKey = await cloud.createApiKey(tenantId)
    const punches = freshPunches(codes)
    expect((await post(capped, apiKey, undefined, punches)).statusCode).toBe(200)

    // Duplicates under fresh keys, until the credential's allowance is spent (or far past it).
    const keys: string[] = []
    let refused: LightMyRequestResponse | undefined
    let largest = 0
    for (let i = 0; i < 60 && !refused; i++) {
      const key = `flood-${i}-${randomBytes(4).toString('hex')}`
      const res = await post(capped, apiKey, key, punches)
      if (res.statusCode === 429) refused = res
      else {
        expect(res.statusCode).toBe(200)
        keys.push(key)
        largest = Math.max(largest, await responseBodyLength(cloud, tenantId, key))
      }
    }
    expect(refused?.statusCode, `no refusal after ${keys.length} batches`).toBe(429)
    const problem = refused?.json()
    expect(problem.code).toBe('idempotency_storage_full')
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0)

    // It may pass its allowance by the one response that reached it, and no more.
    const kept = await storedBytes(cloud, tenantId)
    expect(kept).toBeLessThanOrEqual(ALLOWANCE + largest + 600)

    // Refused means nothing happened: fresh punches under a fresh key are not stored.
    const fresh = freshPunches(codes).slice(0, 3)
    const refusedFresh = await post(capped, apiKey, `fresh-${randomBytes(4).toString('hex')}`, fresh)
    expect(refusedFresh.statusCode).toBe(429)
    const list = await capped.inject({
      method: 'GET',
      url: `${PUBLIC}/attendance/punches?limit=200`,
      headers: bearer(apiKey),
    })
    const externalIds = (list.json().data as { externalId: string }[]).map((p) => p.externalId)
    for (const p of fresh) expect(externalIds).not.toContain(p.externalId)
    expect(await storedBytes(cloud, tenantId)).toBe(kept)

    // A retry of a stored key is still answered, from what was stored.
    const retry = await post(capped, apiKey, keys[0] as string, punches)
    expect(retry.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')

    // Without a key the credential is served as before (externalId still deduplicates punches).
    const unkeyed = await post(capped, apiKey, undefined, fresh)
    expect(unkeyed.statusCode).toBe(200)
    expect(unkeyed.json().summary.created).toBe(3)

    // The allowance is the credential's own: another key of the same tenant keeps its own.
    const other = await cloud.createApiKey(tenantId)
    const served = await post(capped, other, `other-${randomBytes(4).toString('hex')}`, punches)
    expect(served.statusCode).toBe(200)
  })
})

describeEachDatabase('security review #15: Idempotency-Key where it is not honoured', (cloud) => {
  let t: TenantFixture
  beforeAll(async () => {
    t = await createTenantFixture(cloud)
  }, 60_000)

  const keyCount = async () =>
    (
      await cloud.app.inject({ method: 'GET', url: `${CONSOLE}/api-keys`, headers: bearer(t.adminToken) })
    ).json().data.length as number

  it('security review #15: three retries of a console POST with one Idempotency-Key never make three API keys', async () => {
    const route = routes.find((r) => routeKey(r) === `POST ${CONSOLE}/api-keys`)
    if (!route) throw new Error('no console route creates API keys')
    const before = await keyCount()
    const answers: string[] = []
    for (let i = 0; i < 3; i++) {
      const planned = await ownRequest(cloud, route, t)
      planned.options.headers = { ...planned.options.headers, 'idempotency-key': 'create-key-1' }
      const res = await send(cloud, planned)
      answers.push(`${res.statusCode} ${codeOf(res) ?? ''}`)
    }
    expect(await keyCount(), `keys made by three retries (${answers.join(', ')})`).toBe(before)
    expect(answers).toEqual(Array(3).fill('400 idempotency_key_not_supported'))
    // Without the header, the same request creates its key as before.
    const res = await send(cloud, await ownRequest(cloud, route, t))
    expect(res.statusCode).toBe(201)
    expect(await keyCount()).toBe(before + 1)
  })

  it('security review #15: every POST and PATCH but the punch routes refuses Idempotency-Key, and only the punch routes declare it', async () => {
    const changing = routes.filter((r) => r.method === 'POST' || r.method === 'PATCH')
    expect(changing.length).toBeGreaterThan(10)
    const wrong: string[] = []
    for (const route of changing) {
      if (HONOURING.includes(routeKey(route))) continue
      const planned = await ownRequest(cloud, route, t)
      planned.options.headers = {
        ...planned.options.headers,
        'idempotency-key': `k-${randomBytes(4).toString('hex')}`,
      }
      const res = await send(cloud, planned)
      if (res.statusCode !== 400 || codeOf(res) !== 'idempotency_key_not_supported') {
        wrong.push(`${routeKey(route)}: ${res.statusCode} ${codeOf(res) ?? ''}`)
      }
    }
    expect(wrong).toEqual([])
    // The API description names the header on exactly the routes that honour it.
    const spec = (await cloud.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>
    }
    const declaring = Object.entries(spec.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, op]) =>
          (op.parameters ?? []).some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
        )
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    expect(declaring.sort()).toEqual([...HONOURING].sort())
  }, 120_000)
})
