/**
 * Security review, item 13 (Medium): concurrent changes to a webhook endpoint deadlocked on
 * PostgreSQL and answered 500. The review created an endpoint, paused it, sent a test event, then sent
 * 20 parallel `resume` and `test` requests over one or two instances: 3 to 22 of every 100 answered
 * 500, `deadlock detected` in the fan-out an endpoint change makes of the tenant's pending events.
 * So did 14 of 80 endpoint creations made beside 40 punches.
 *
 * Here two app instances share one PostgreSQL database, each with its webhook dispatcher running, and
 * take rounds of parallel resume, test, pause and create requests, with punches posted beside them,
 * spread over both. No answer may be a 5xx, and no event may be lost: every test event sent to an
 * endpoint becomes a delivery to it. Beside it: the transaction runner runs a deadlock's loser again,
 * and a conflict that outlasts the retries is a 503 with Retry-After. PostgreSQL only (SQLite has one
 * writer, nothing to deadlock): skipped with its reason when absent, failed under
 * HAJRI_TEST_REQUIRE_ALL=1.
 */

import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import Fastify from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { transactionRunner } from '../../../cloud/db/group-commit.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import errorsPlugin from '../../../cloud/plugins/errors.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../../cloud/settings/webhook-settings.js'
import {
  bearer,
  createTestDatabaseUrl,
  employee,
  TEST_ACTOR,
  TEST_SECRET_KEY,
} from '../../support/cloud-harness.js'
import { postgresAvailability } from '../../support/services.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'

const postgres = await postgresAvailability()

const CONSOLE = '/api/console/v1'
const ROUNDS = 5
const PARALLEL = 20
const TENANTS = 3

describe.skipIf(postgres.skipReason !== undefined)(
  `webhook endpoint changes on PostgreSQL, over two instances${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    const receiver = new WebhookReceiver()
    const handles: DatabaseHandle[] = []
    const apps: FastifyInstance[] = []
    let drop: (() => Promise<void>) | undefined

    beforeAll(async () => {
      await receiver.start()
      const target = await createTestDatabaseUrl('postgres')
      drop = target.drop
      for (let i = 0; i < 2; i++) {
        const handle = openDatabase(target.url, { poolSize: 10, secretKey: TEST_SECRET_KEY })
        handles.push(handle)
        if (i === 0) await migrateToLatest(handle.db)
        const app = await buildApp({
          config: {
            bodyLimitBytes: 1024 * 1024,
            trustProxy: false,
            logLevel: 'silent',
            oauthRateLimitPerIp: 1_000_000,
            oauthRateLimitPerClient: 1_000_000,
            consoleRateLimit: 1_000_000,
            webhooks: { ...DEFAULT_WEBHOOK_SETTINGS, retrySchedule: [0], allowlist: ['127.0.0.1'] },
          },
          dispatchWebhooks: true,
          database: handle,
          logger: false,
          closeDatabase: false,
        })
        await app.ready()
        apps.push(app)
      }
    })

    afterAll(async () => {
      for (const app of apps) await app.close()
      for (const handle of handles) await handle.close()
      await drop?.()
      await receiver.stop()
    })

    it('security review #13: answers no 5xx to parallel resume, test, pause and create requests beside punches, and loses no event', {
      timeout: 120_000,
    }, async () => {
      const [first] = apps as [FastifyInstance]
      const answers: { what: string; status: number; body: string }[] = []
      let turn = 0
      /** Each request to the next instance in turn: the two race each other, as behind a balancer. */
      const call = async (
        what: string,
        method: 'POST' | 'PATCH',
        url: string,
        headers: Record<string, string>,
        payload?: object,
      ): Promise<LightMyRequestResponse> => {
        const app = apps[turn++ % apps.length] as FastifyInstance
        const res = await app.inject({ method, url, headers, ...(payload ? { payload } : {}) })
        answers.push({ what, status: res.statusCode, body: res.body })
        return res
      }

      const tenants = await Promise.all(
        Array.from({ length: TENANTS }, async (_, t) => {
          const { tenantId } = await first.services.tenants.create({
            name: `Deadlock ${t}`,
            adminEmail: `owner-${t}@deadlock.test`,
          })
          const { token } = await first.services.adminTokens.create(tenantId, {}, TEST_ACTOR)
          const codes = Array.from({ length: 5 }, (_, n) => `E${t}-${n}`)
          await first.services.employees.upsert(
            tenantId,
            codes.map((code) => employee(code)),
          )
          const key = (await first.services.apiKeys.create(
            tenantId,
            { scopes: ['attendance:write'], rateLimitPerMinute: 100_000 },
            TEST_ACTOR,
          )) as { key: string }
          return { tenantId, admin: bearer(token), api: bearer(key.key), codes }
        }),
      )

      let punchSerial = 0
      const punches = (tenant: (typeof tenants)[number]) =>
        call('punch', 'POST', '/api/public/v1/attendance/punches/batch', tenant.api, {
          punches: Array.from({ length: 5 }, (_, i) => {
            const n = punchSerial++
            return {
              employeeCode: tenant.codes[i % tenant.codes.length],
              punchType: n % 2 === 0 ? 'IN' : 'OUT',
              punchedAt: new Date(Date.now() - 3600_000 + n * 1000).toISOString(),
              externalId: `deadlock-${n}`,
            }
          }),
        })
      const create = (tenant: (typeof tenants)[number], n: number) =>
        call('create', 'POST', `${CONSOLE}/webhooks`, tenant.admin, {
          url: receiver.url(`/deadlock-${tenant.tenantId}-${n}`),
        })

      // The review's reproduction: an endpoint per tenant, paused, with a test event held for it.
      const endpoints = new Map<string, string>()
      for (const tenant of tenants) {
        const res = await create(tenant, 0)
        expect(res.statusCode, res.body).toBe(201)
        const id = res.json().id as string
        endpoints.set(tenant.tenantId, id)
        expect(
          (await call('pause', 'POST', `${CONSOLE}/webhooks/${id}/pause`, tenant.admin)).statusCode,
        ).toBe(200)
        expect(
          (await call(`test ${id}`, 'POST', `${CONSOLE}/webhooks/${id}/test`, tenant.admin)).statusCode,
        ).toBe(202)
      }

      let created = 1
      for (let round = 0; round < ROUNDS; round++) {
        const work: Promise<unknown>[] = []
        for (const tenant of tenants) {
          const id = endpoints.get(tenant.tenantId) as string
          for (let i = 0; i < PARALLEL; i++) {
            const action = i % 5 === 4 ? 'pause' : i % 2 === 0 ? 'resume' : 'test'
            work.push(call(`${action} ${id}`, 'POST', `${CONSOLE}/webhooks/${id}/${action}`, tenant.admin))
          }
          // New endpoints beside them (each resume and creation fans the tenant's pending events out).
          for (let i = 0; i < 3; i++) work.push(create(tenant, created++))
          for (let i = 0; i < 3; i++) work.push(punches(tenant))
        }
        await Promise.all(work)
      }
      for (const tenant of tenants) {
        const id = endpoints.get(tenant.tenantId) as string
        expect(
          (await call('resume', 'POST', `${CONSOLE}/webhooks/${id}/resume`, tenant.admin)).statusCode,
        ).toBe(200)
      }

      const failed = answers.filter((a) => a.status >= 500)
      expect(
        failed.map((a) => `${a.what} ${a.status} ${a.body.slice(0, 200)}`),
        `${failed.length} of ${answers.length} requests answered 5xx`,
      ).toEqual([])
      // Every other answer is a success: the endpoints made stay under the per-tenant cap.
      const unexpected = answers.filter((a) => !(a.status >= 200 && a.status < 300))
      expect(unexpected.map((a) => `${a.what} ${a.status} ${a.body.slice(0, 200)}`)).toEqual([])

      // No event lost: each test event accepted for an endpoint became a delivery to it.
      const { db } = handles[0] as DatabaseHandle
      for (const tenant of tenants) {
        const id = endpoints.get(tenant.tenantId) as string
        const events = await db
          .selectFrom('webhook_events')
          .select('id')
          .where('tenant_id', '=', tenant.tenantId)
          .where('endpoint_id', '=', id)
          .execute()
        const accepted = answers.filter((a) => a.what === `test ${id}` && a.status === 202)
        expect(events).toHaveLength(accepted.length)
        const deadline = Date.now() + 20_000
        let deliveries = 0
        while (Date.now() < deadline) {
          deliveries = (
            await db
              .selectFrom('webhook_deliveries')
              .select('event_id')
              .where('endpoint_id', '=', id)
              .where('event_type', '=', 'webhook.test')
              .execute()
          ).length
          if (deliveries === events.length) break
          await new Promise((resolve) => setTimeout(resolve, 50))
        }
        expect(deliveries).toBe(events.length)
      }
    })
  },
)

describe.skipIf(postgres.skipReason !== undefined)(
  `the PostgreSQL transaction runner and deadlocks${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    let handle: DatabaseHandle | undefined
    let drop: (() => Promise<void>) | undefined

    beforeAll(async () => {
      const target = await createTestDatabaseUrl('postgres')
      drop = target.drop
      handle = openDatabase(target.url, { poolSize: 4 })
      await sql`create table pair (id int primary key, n int not null)`.execute(handle.db)
      await sql`insert into pair values (1, 0), (2, 0)`.execute(handle.db)
    })

    afterAll(async () => {
      await handle?.close()
      await drop?.()
    })

    /**
     * Two transactions that lock rows 1 and 2 in opposite orders, each holding its first row until the
     * other holds its own: PostgreSQL ends one with 40P01. `run` runs each; the loser's error, if any,
     * is returned, with how often each unit of work ran.
     */
    async function deadlock(run: (work: (trx: never) => Promise<void>) => Promise<void>) {
      const { db } = handle as DatabaseHandle
      let holding = 0
      let bothHold: () => void = () => {}
      const barrier = new Promise<void>((resolve) => {
        bothHold = resolve
      })
      const runs = [0, 0]
      const unit = (index: number, first: number, second: number) => async (trx: typeof db) => {
        runs[index] = (runs[index] ?? 0) + 1
        await sql`update pair set n = n + 1 where id = ${first}`.execute(trx)
        // Only the first run waits for the other: a run again meets a committed (or waiting) peer.
        if ((runs[index] ?? 0) === 1) {
          if (++holding === 2) bothHold()
          await barrier
        }
        await sql`update pair set n = n + 1 where id = ${second}`.execute(trx)
      }
      const outcomes = await Promise.allSettled([run(unit(0, 1, 2) as never), run(unit(1, 2, 1) as never)])
      return { outcomes, runs }
    }

    it('security review #13: the transaction runner runs the loser of a deadlock again, and both commit', async () => {
      const { db } = handle as DatabaseHandle
      const { outcomes, runs } = await deadlock(transactionRunner(db, 'postgres') as never)
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled'])
      // One of the two lost the deadlock and ran twice: the retry, not luck, let both through.
      expect([...runs].sort()).toEqual([1, 2])
      const rows = await sql<{ n: number }>`select n from pair order by id`.execute(db)
      expect(rows.rows.map((r) => r.n)).toEqual([2, 2])
    }, 30_000)

    it('security review #13: a deadlock that outlasts the retries answers 503 with Retry-After, not 500', async () => {
      const { db } = handle as DatabaseHandle
      // A real deadlock, without the runner's retry: PostgreSQL's own error, SQLSTATE 40P01.
      const { outcomes } = await deadlock((work) => db.transaction().execute(work as never))
      const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult | undefined
      expect((lost?.reason as { code?: string } | undefined)?.code).toBe('40P01')

      // Thrown by a route, it goes through the app's one error handler.
      const app = Fastify({ logger: false })
      await app.register(errorsPlugin)
      app.post('/change', async () => {
        throw lost?.reason
      })
      try {
        const res = await app.inject({ method: 'POST', url: '/change' })
        expect(res.statusCode).toBe(503)
        expect(res.headers['retry-after']).toBe('1')
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
        expect(res.json()).toMatchObject({ status: 503, code: 'service_unavailable' })
        // Nothing internal in the answer: the SQL error stays in the log.
        expect(res.body).not.toMatch(/deadlock|pair/i)
      } finally {
        await app.close()
      }
    }, 30_000)
  },
)
