/**
 * The cloud process killed (SIGKILL) mid-dispatch and restarted: no delivery is lost. A delivery
 * is sent twice only when its attempt was in flight at the kill, and then with the same webhook-id
 * (docs/development/architecture.md#events-and-webhooks).
 *
 * `hajri-cloud serve` runs as a real child process over a real database, sending to a real HTTP
 * receiver (test/support/webhook-receiver.ts) on two endpoints. Punch batches posted to its public
 * API keep events coming (the outbox: one attendance.punch.created per stored punch). The receiver
 * answers each request after a random few ms (so attempts are in flight at any moment), and the first
 * request of one delivery in ten with a 503 (so retries are pending across kills too). The child is
 * killed with SIGKILL twelve times, in four ways: the instant a request reaches the receiver (in
 * flight, unanswered), just after an answer went back (answered, outcome maybe not yet written), at
 * a random moment, and while it is starting. After each kill, before the restart, the
 * database shows which deliveries the dead process held claims on: those were its attempts in flight.
 *
 * Judged at the end, per delivery: the receiver got it at least once (nothing lost); every request
 * carried the event's id as webhook-id and its exact body, signed with the endpoint's secret; the
 * delivery log says succeeded, with one attempt row per answered attempt; and the requests beyond
 * those attempt rows (sent again because a kill came before the outcome was written) number no more
 * than the claims it had at kills. Also, at every kill, each request the receiver had not answered
 * yet, or got only after the kill, belonged to a delivery the database showed claimed.
 *
 * The seed is printed with the counts; HAJRI_E2E_SEED=<n> replays its choices (the timing around
 * them is the machine's). HAJRI_E2E_KEEP=1 keeps the directory with the cloud's log of every run;
 * HAJRI_E2E_DATABASE=postgres runs it on PostgreSQL, where a dead instance's claims are leases that
 * run out (k timeouts + 60 s for the k-th of a run) before another instance takes them, so that run
 * takes minutes more.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseKind } from '../../support/cloud-harness.js'
import { CloudProcess } from '../../support/cloud-process.js'
import { freePort, printTable, seededRandom, sleep, waitFor, withTimeout } from '../../support/e2e-kit.js'
import { postgresAvailability } from '../../support/services.js'
import { type ReceivedWebhook, WebhookReceiver } from '../../support/webhook-receiver.js'
import {
  expectDeliveryLogAllSucceeded,
  judgeDeliveries,
  type KillMode,
  type KillRecord,
} from './judge-deliveries.js'
import {
  isDone,
  openWebhookFixture,
  openWork,
  PunchPump,
  readWebhookRecord,
  type WebhookFixture,
} from './webhook-fixture.js'

const DATABASE: DatabaseKind = process.env.HAJRI_E2E_DATABASE === 'postgres' ? 'postgres' : 'sqlite'
if (DATABASE === 'postgres') {
  const postgres = await postgresAvailability()
  if (postgres.skipReason) throw new Error(`HAJRI_E2E_DATABASE=postgres but ${postgres.skipReason}`)
}

const SEED = process.env.HAJRI_E2E_SEED
  ? Number(process.env.HAJRI_E2E_SEED)
  : Math.floor(Math.random() * 2 ** 31)

/** Twelve kills, each way more than once; their order is the seed's. */
const KILL_MODES: readonly KillMode[] = [
  ...Array<KillMode>(4).fill('on-receipt'),
  ...Array<KillMode>(3).fill('after-answer'),
  ...Array<KillMode>(3).fill('random'),
  ...Array<KillMode>(2).fill('startup'),
]
/** Punches each process may post: events keep coming in every life, so every kill lands mid-dispatch. */
const PUNCHES_PER_LIFE = 50
const ENDPOINT_PATHS = ['/a', '/b']
const MAX_ANSWER_DELAY_MS = 60
/** The child's attempt timeout: far above the receiver's delays, so every attempt gets an answer. */
const ATTEMPT_TIMEOUT_SECONDS = 5

describe(`hajri-cloud serve killed with SIGKILL mid-dispatch [${DATABASE}]`, () => {
  const receiver = new WebhookReceiver()
  let fixture: WebhookFixture
  let dir = ''

  beforeAll(async () => {
    await receiver.start()
    fixture = await openWebhookFixture(DATABASE, {
      receiverUrl: (path) => receiver.url(path),
      endpointPaths: ENDPOINT_PATHS,
      employees: 40,
    })
    receiver.verifyWith(...fixture.endpoints.map((e) => e.secret))
    dir = await mkdtemp(join(tmpdir(), 'hajri-e2e-webhooks-'))
  })

  afterAll(async () => {
    await receiver.stop()
    await fixture?.close()
    if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${dir}`)
    else if (dir) await rm(dir, { recursive: true, force: true })
  })

  it(`every delivery reaches the receiver across ${KILL_MODES.length} SIGKILLs; a repeat only for an attempt in flight at a kill, with the same webhook-id and body`, {
    timeout: DATABASE === 'postgres' ? 300_000 : 180_000,
  }, async () => {
    const startedAt = Date.now()
    const { db } = fixture.database
    const tenantId = fixture.tenant.id
    const random = seededRandom(SEED)
    const answerRandom = seededRandom(SEED ^ 0x5eed)
    const cloud = new CloudProcess({
      env: {
        ...fixture.serveEnv,
        HAJRI_PORT: String(await freePort()),
        HAJRI_WEBHOOK_RETRY_SCHEDULE: '0,1,1,1',
        HAJRI_WEBHOOK_TIMEOUT_SECONDS: String(ATTEMPT_TIMEOUT_SECONDS),
        HAJRI_WEBHOOK_CONCURRENCY: '8',
        HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: '4',
      },
      logPath: join(dir, 'cloud.log'),
    })
    const pump = new PunchPump({
      baseUrls: () => [cloud.url],
      apiKey: fixture.apiKey,
      employeeCodes: fixture.employeeCodes,
      batchSize: 10,
      intervalMs: 60,
      // Its own source: how often it is called depends on timing, and must not shift the kills'.
      random: seededRandom(SEED ^ 0x9e37),
      firstPunchMs: Math.floor(Date.now() / 1000) * 1000 - 20 * 3600_000,
    })

    // The receiver's view, kept as it happens: which requests are not answered yet.
    const keyOf = (r: ReceivedWebhook) => `${r.path} ${String(r.headers['webhook-id'])}`
    const timesSeen = new Map<string, number>()
    const unanswered = new Set<number>()
    let receiptsThisLife = 0
    /** An armed kill, told of each request as it arrives (with the delay it will be answered after). */
    let onRequest: ((delayMs: number) => void) | undefined
    receiver.respond((request, index) => {
      const key = keyOf(request)
      const seen = (timesSeen.get(key) ?? 0) + 1
      timesSeen.set(key, seen)
      receiptsThisLife++
      const delayMs = 1 + Math.floor(answerRandom() * MAX_ANSWER_DELAY_MS)
      unanswered.add(index)
      // Set before the receiver's own timer for the answer, with the same delay, so it fires first:
      // `unanswered` may drop a request a moment early, but never holds one already answered.
      setTimeout(() => unanswered.delete(index), delayMs)
      onRequest?.(delayMs)
      return { status: seen === 1 && failsFirstTime(key) ? 503 : 204, delayMs }
    })

    const kills: KillRecord[] = []
    /** SIGKILL now, noting what the receiver had not answered at this very moment. */
    const killNow = (n: number, mode: KillMode) => {
      const pending = [...unanswered].map((i) => keyOf(receiver.received[i] as ReceivedWebhook))
      if (!cloud.killNow()) throw new Error(`kill ${n}: no cloud process was running`)
      const count = receiver.received.length
      kills.push({
        n,
        mode,
        unanswered: pending,
        arrivedAfter: { from: count, to: count },
        claims: new Map(),
      })
    }
    const claimsNow = async () => {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'claimed_until'])
        .where('tenant_id', '=', tenantId)
        .where('claimed_until', 'is not', null)
        .execute()
      return new Map(rows.map((r) => [r.id, r.claimed_until as number]))
    }

    const modes = shuffled(KILL_MODES, random)
    let record = await readWebhookRecord(db, tenantId)
    let drainMs = 0
    let result: ReturnType<typeof judgeDeliveries> | undefined
    try {
      pump.start()
      for (const [i, mode] of modes.entries()) {
        const n = i + 1
        receiptsThisLife = 0
        cloud.spawn()
        pump.allow(PUNCHES_PER_LIFE)
        if (mode === 'startup') {
          // Migrating, releasing the last process's claims, the first fan-out: whatever it has reached.
          await sleep(100 + Math.floor(random() * 1400))
          killNow(n, mode)
        } else {
          await cloud.ready()
          if (mode === 'random') {
            await receiver.waitFor(() => receiptsThisLife > 0, 30_000, `deliveries from run ${cloud.runs}`)
            await sleep(50 + Math.floor(random() * 1200))
            killNow(n, mode)
          } else {
            // The kill comes with the at-th request of this run: as it arrives ('on-receipt'), or
            // just after its answer went back ('after-answer'), before the outcome may be written.
            const at = receiptsThisLife + 1 + Math.floor(random() * 40)
            await withTimeout(
              new Promise<void>((resolve) => {
                onRequest = (delayMs) => {
                  if (receiptsThisLife < at) return
                  onRequest = undefined
                  if (mode === 'on-receipt') {
                    killNow(n, mode)
                    resolve()
                  } else {
                    setTimeout(() => {
                      killNow(n, mode)
                      resolve()
                    }, delayMs + 2)
                  }
                }
              }),
              30_000,
              `request ${at} of run ${cloud.runs} (kill ${n}, ${mode})`,
            )
          }
        }
        await cloud.whenExited()
        // The dead process's claims, before the next one starts (on SQLite it releases them all).
        const kill = kills.at(-1) as KillRecord
        kill.claims = await claimsNow()
        kill.arrivedAfter.to = receiver.received.length
      }

      // The last process runs until everything is delivered; then a clean stop.
      const drainStartedAt = Date.now()
      await cloud.start()
      await waitFor(
        async () => {
          record = await readWebhookRecord(db, tenantId)
          return pump.idle && isDone(record, ENDPOINT_PATHS.length)
        },
        'every event delivered to every endpoint',
        {
          timeoutMs: DATABASE === 'postgres' ? 150_000 : 90_000,
          intervalMs: 200,
          describe: () => ({ ...openWork(record, ENDPOINT_PATHS.length), pumpIdle: pump.idle }),
        },
      )
      drainMs = Date.now() - drainStartedAt
      await expectDeliveryLogAllSucceeded(cloud.url, fixture.adminToken, record.deliveries.length)
      expect(await cloud.stop(), 'exit status of a SIGTERM stop').toBe(0)
    } finally {
      // The counts are printed even when the run fails on its way, so a CI log shows how far it got.
      await cloud.dispose()
      await pump.stop().catch((err) => console.warn('punch pump:', err))
      record = await readWebhookRecord(db, tenantId)
      result = judgeDeliveries(fixture, record, receiver.received, kills)
      printTable('hajri-cloud webhooks across SIGKILLs', {
        seed: SEED,
        database: DATABASE,
        kills: kills.length,
        ...Object.fromEntries(
          (['on-receipt', 'after-answer', 'random', 'startup'] as const).map((m) => [
            `kills ${m}`,
            kills.filter((k) => k.mode === m).length,
          ]),
        ),
        'kills with requests unanswered': kills.filter((k) => k.unanswered.length > 0).length,
        'kills with claims in flight': kills.filter((k) => k.claims.size > 0).length,
        'cloud processes': cloud.runs,
        'punches stored': record.punches,
        'punch batch sends failed (sent again)': pump.counts.resent,
        events: record.events.length,
        deliveries: record.deliveries.length,
        'requests received': receiver.received.length,
        'attempt rows': record.attempts.length,
        'ids received more than once': result.receivedMoreThanOnce,
        'retries after a 503 (logged)': result.loggedRetries,
        'sent again after a kill (duplicates)': result.duplicates,
        '  deliveries concerned': result.duplicatedDeliveries,
        '  unanswered at the kill': result.duplicatesUnanswered,
        '  reached the receiver after the kill': result.duplicatesArrivedAfter,
        '  answered, outcome not yet written': result.duplicatesAnsweredUnwritten,
        'duplicates not explained by a kill': result.unexplained.length,
        lost: result.lost.length,
        'cloud error lines': cloud.errors.length,
        'unexpected cloud exits': cloud.unexpectedExits.length,
        'final drain ms': drainMs,
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })
    }

    if (cloud.errors.length > 0) console.warn('cloud error lines (first 10):', cloud.errors.slice(0, 10))

    if (!result) throw new Error('not judged')
    expect(pump.failure, 'the punch pump stopped on an error').toBeUndefined()
    expect(cloud.unexpectedExits, 'the cloud exited on its own (a crash)').toEqual([])
    expect(kills).toHaveLength(KILL_MODES.length)
    expect(result.lost.slice(0, 20), `${result.lost.length} deliveries never reached the receiver`).toEqual(
      [],
    )
    expect(result.strangers.slice(0, 20), 'requests for no delivery in the log').toEqual([])
    expect(result.mismatched.slice(0, 20), 'requests not carrying their event as stored').toEqual([])
    expect(result.badLog.slice(0, 20), 'delivery log entries not as the receiver saw them').toEqual([])
    expect(
      result.unexplained.slice(0, 20),
      `${result.unexplained.length} deliveries sent more often than their attempts and kills explain`,
    ).toEqual([])
    expect(
      result.inFlightNotClaimed.slice(0, 20),
      'requests in flight at a kill (unanswered, or arriving after it) whose delivery was not claimed',
    ).toEqual([])
    expect(cloud.errors.map((e) => e.msg)).toEqual([])
    // The outbox: one event per stored punch, and every punch the pump was told was stored.
    expect(record.events.filter((e) => e.type === 'attendance.punch.created')).toHaveLength(record.punches)
    expect(record.punches).toBe(pump.posted)
    // The test saw what it is about: a kill as a request arrived leaves that attempt in flight, so
    // its delivery must have been sent again after the restart.
    const onReceipt = kills.filter((k) => k.mode === 'on-receipt')
    expect(onReceipt.every((k) => k.unanswered.length > 0 && k.claims.size > 0)).toBe(true)
    expect(result.duplicatesUnanswered).toBeGreaterThan(0)
    expect(record.deliveries.length).toBeGreaterThan(PUNCHES_PER_LIFE * KILL_MODES.length)
  })
})

/** One delivery in ten (by its id, so the same on every request of it) fails its first request. */
function failsFirstTime(key: string): boolean {
  return (createHash('sha256').update(key).digest()[0] as number) < 26
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items]
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[copy[i], copy[j]] = [copy[j] as T, copy[i] as T]
  }
  return copy
}
