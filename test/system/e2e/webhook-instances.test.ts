/**
 * Several cloud instances on PostgreSQL dispatch without sending any delivery twice (claims with
 * FOR UPDATE SKIP LOCKED, docs/decisions/0053-webhook-claims-are-leases.md). Three `hajri-cloud serve`
 * children over one PostgreSQL database share one backlog: deliveries held while their endpoints were paused,
 * released at once by a resume when every instance is up, plus punches posted to all three meanwhile (so they
 * also race to fan new events out). Each instance logs every delivery it makes (HAJRI_LOG_LEVEL=debug,
 * 'webhook delivered'), which says who sent what; the receiver says what arrived.
 *
 * Judged at the end: each delivery reached the receiver exactly once (per endpoint, each webhook-id
 * once), with its event's body and signature; its log shows one successful attempt; exactly one
 * instance reports having sent it; and every instance sent some.
 *
 * Skipped with its reason without PostgreSQL (HAJRI_TEST_POSTGRES_URL); failed instead under
 * HAJRI_TEST_REQUIRE_ALL=1. HAJRI_E2E_KEEP=1 keeps the directory with the instances' logs.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_ACTOR } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { freePort, printTable, seededRandom, waitFor } from '../../support/e2e-kit.js'
import { postgresAvailability } from '../../support/services.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'
import {
  isDone,
  openWebhookFixture,
  openWork,
  PunchPump,
  readWebhookRecord,
  type WebhookFixture,
} from './webhook-fixture.js'

const postgres = await postgresAvailability()

const INSTANCES = 3
const ENDPOINT_PATHS = ['/a', '/b']
/** Punches stored before any instance runs (the backlog), and posted while they dispatch. */
const BACKLOG_PUNCHES = 400
const LIVE_PUNCHES = 200
const MAX_ANSWER_DELAY_MS = 30

describe.skipIf(postgres.skipReason !== undefined)(
  `hajri-cloud: ${INSTANCES} instances dispatch one backlog on PostgreSQL${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`,
  () => {
    const receiver = new WebhookReceiver()
    let fixture: WebhookFixture
    let dir = ''

    beforeAll(async () => {
      await receiver.start()
      fixture = await openWebhookFixture('postgres', {
        receiverUrl: (path) => receiver.url(path),
        endpointPaths: ENDPOINT_PATHS,
        employees: 40,
      })
      receiver.verifyWith(...fixture.endpoints.map((e) => e.secret))
      dir = await mkdtemp(join(tmpdir(), 'hajri-e2e-webhook-instances-'))
    })

    afterAll(async () => {
      await receiver.stop()
      await fixture?.close()
      if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${dir}`)
      else if (dir) await rm(dir, { recursive: true, force: true })
    })

    it('each delivery is sent once, by one instance, and every instance sends some', {
      timeout: 120_000,
    }, async () => {
      const startedAt = Date.now()
      const { db } = fixture.database
      const tenantId = fixture.tenant.id
      const random = seededRandom(Date.now() >>> 0)
      receiver.respond(() => ({ status: 204, delayMs: 1 + Math.floor(random() * MAX_ANSWER_DELAY_MS) }))

      // The backlog: endpoints paused, so events are fanned out into deliveries that wait.
      for (const endpoint of fixture.endpoints) {
        await fixture.services.webhookEndpoints.pause(tenantId, endpoint.id, TEST_ACTOR)
      }
      const firstPunchMs = Math.floor(Date.now() / 1000) * 1000 - 20 * 3600_000
      const backlog = Array.from({ length: BACKLOG_PUNCHES }, (_, n) => ({
        employeeCode: fixture.employeeCodes[n % fixture.employeeCodes.length],
        punchType: 'IN',
        // The live punches (PunchPump) take the seconds after these.
        punchedAt: new Date(firstPunchMs - (n + 1) * 1000).toISOString(),
        externalId: `e2e-backlog-${n}`,
      }))
      const stored = await fixture.services.punches.recordBatch(fixture.tenant, backlog)
      expect(stored.body.summary.created).toBe(BACKLOG_PUNCHES)

      /** deliveryId → the instances that logged sending it. */
      const sentBy = new Map<string, number[]>()
      const delivered = Array.from({ length: INSTANCES }, () => 0)
      const instances: CloudProcess[] = []
      for (let i = 0; i < INSTANCES; i++) {
        instances.push(
          new CloudProcess({
            env: {
              ...fixture.serveEnv,
              HAJRI_PORT: String(await freePort()),
              HAJRI_LOG_LEVEL: 'debug',
              HAJRI_WEBHOOK_CONCURRENCY: '8',
              HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: '4',
            },
            logPath: join(dir, `cloud-${i + 1}.log`),
            onLogLine: (line) => {
              if (line.msg !== 'webhook delivered' || typeof line.deliveryId !== 'string') return
              sentBy.set(line.deliveryId, [...(sentBy.get(line.deliveryId) ?? []), i])
              delivered[i] = (delivered[i] ?? 0) + 1
            },
          }),
        )
      }
      const pump = new PunchPump({
        baseUrls: () => instances.map((c) => c.url),
        apiKey: fixture.apiKey,
        employeeCodes: fixture.employeeCodes,
        batchSize: 10,
        intervalMs: 30,
        random,
        firstPunchMs,
      })

      let record = await readWebhookRecord(db, tenantId)
      let dispatchMs = 0
      try {
        for (const instance of instances) instance.spawn()
        await Promise.all(instances.map((instance) => instance.ready()))
        // Released at once to instances that are all running: they find it at their next poll.
        const releasedAt = Date.now()
        for (const endpoint of fixture.endpoints) {
          await fixture.services.webhookEndpoints.resume(tenantId, endpoint.id, TEST_ACTOR)
        }
        pump.start()
        pump.allow(LIVE_PUNCHES)
        await waitFor(
          async () => {
            record = await readWebhookRecord(db, tenantId)
            return pump.idle && isDone(record, ENDPOINT_PATHS.length)
          },
          'every event delivered to every endpoint',
          {
            timeoutMs: 90_000,
            intervalMs: 200,
            describe: () => ({ ...openWork(record, ENDPOINT_PATHS.length), pumpIdle: pump.idle, delivered }),
          },
        )
        dispatchMs = Date.now() - releasedAt
        await pump.stop()
        const codes = await Promise.all(instances.map((instance) => instance.stop()))
        expect(codes, 'exit statuses of SIGTERM stops').toEqual(instances.map(() => 0))
      } finally {
        await pump.stop().catch(() => {})
        await Promise.all(instances.map((instance) => instance.dispose()))
        record = await readWebhookRecord(db, tenantId)
      }

      const keyOf = (path: string | undefined, id: unknown) => `${path} ${String(id)}`
      const pathOf = new Map(fixture.endpoints.map((e) => [e.id, e]))
      const eventById = new Map(record.events.map((e) => [e.id, e]))
      const receipts = new Map<string, number>()
      for (const r of receiver.received) {
        const key = keyOf(r.path, r.headers['webhook-id'])
        receipts.set(key, (receipts.get(key) ?? 0) + 1)
      }
      const attempts = new Map<string, (number | null)[]>()
      for (const a of record.attempts)
        attempts.set(a.delivery_id, [...(attempts.get(a.delivery_id) ?? []), a.response_status])
      const keys = new Set<string>()
      const problems = {
        missing: [] as string[],
        twice: [] as string[],
        badLog: [] as string[],
        bySeveral: [] as string[],
      }
      for (const d of record.deliveries) {
        const key = keyOf(pathOf.get(d.endpoint_id)?.path, d.event_id)
        keys.add(key)
        const n = receipts.get(key) ?? 0
        if (n === 0) problems.missing.push(key)
        if (n > 1) problems.twice.push(`${key} x${n}`)
        const log = attempts.get(d.id) ?? []
        if (d.status !== 'succeeded' || d.attempts !== 1 || log.length !== 1 || log[0] !== 204) {
          problems.badLog.push(`${key}: ${d.status}, attempts ${d.attempts}, logged ${JSON.stringify(log)}`)
        }
        const senders = sentBy.get(d.id) ?? []
        if (senders.length !== 1)
          problems.bySeveral.push(`${d.id}: logged by instances ${JSON.stringify(senders)}`)
      }
      const strangers = [...receipts.keys()].filter((k) => !keys.has(k))
      const mismatched = receiver.received.filter((r) => {
        const event = eventById.get(String(r.headers['webhook-id']))
        const endpoint = fixture.endpoints.find((e) => e.path === r.path)
        return !event || !endpoint || r.body !== event.body || !r.verifiedWith.includes(endpoint.secret)
      })
      const errors = instances.flatMap((instance) => instance.errors)

      printTable(`hajri-cloud webhooks, ${INSTANCES} instances on PostgreSQL`, {
        events: record.events.length,
        deliveries: record.deliveries.length,
        'requests received': receiver.received.length,
        'received more than once': problems.twice.length,
        'never received': problems.missing.length,
        ...Object.fromEntries(delivered.map((n, i) => [`sent by instance ${i + 1}`, n])),
        'logged by no or several instances': problems.bySeveral.length,
        'punches posted while dispatching': pump.posted,
        'instance error lines': errors.length,
        'dispatch ms (release to all delivered)': dispatchMs,
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
      if (errors.length > 0) console.warn('instance error lines (first 10):', errors.slice(0, 10))

      expect(pump.failure, 'the punch pump stopped on an error').toBeUndefined()
      expect(instances.flatMap((instance) => instance.unexpectedExits)).toEqual([])
      expect(problems.missing.slice(0, 20), 'deliveries never received').toEqual([])
      expect(problems.twice.slice(0, 20), 'deliveries received more than once').toEqual([])
      expect(strangers.slice(0, 20), 'requests for no delivery in the log').toEqual([])
      expect(mismatched.length, 'requests not carrying their event as stored').toBe(0)
      expect(problems.badLog.slice(0, 20), 'delivery log entries other than one 204').toEqual([])
      expect(problems.bySeveral.slice(0, 20), 'deliveries not sent by exactly one instance').toEqual([])
      expect(receiver.received).toHaveLength(record.deliveries.length)
      expect(record.deliveries).toHaveLength(record.events.length * ENDPOINT_PATHS.length)
      expect(record.punches).toBe(BACKLOG_PUNCHES + LIVE_PUNCHES)
      expect(errors.map((e) => e.msg)).toEqual([])
      // The work was shared: each instance sent some of it.
      for (const [i, n] of delivered.entries())
        expect(n, `deliveries sent by instance ${i + 1}`).toBeGreaterThan(0)
    })
  },
)
