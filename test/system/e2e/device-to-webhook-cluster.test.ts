/**
 * End to end: device (serial pseudo-terminal and MQTT) → agent → cloud → webhook receiver, with
 * Standard Webhooks signatures verified, on PostgreSQL + Redis with two cloud instances behind one
 * address. (The SQLite run is device-to-webhook-sqlite.test.ts.)
 *
 * Two `hajri-cloud serve` children over one fresh PostgreSQL schema, sharing Redis and the secret key,
 * behind a round-robin reverse proxy (round-robin-proxy.ts) that sends each request to the next
 * instance. The agent's cloud.url and the test's API calls go through the proxy, so the agent's
 * token comes from one instance and is used on both, and its uploads are stored by both; the
 * proxy's counts show it. Both instances dispatch webhooks; their debug logs say which sent each
 * delivery, and each must be sent by exactly one. Then each dispatcher is shown alive on its own:
 * with the other instance frozen (SIGSTOP), a punch posted to it reaches the receiver, sent by it.
 * The listing's RateLimit-Remaining counts down by one per request across both instances: their
 * counters are in Redis. The verdict on punches and webhooks is the SQLite run's (judge-punch-webhooks.ts).
 *
 * Skipped with its reason without PostgreSQL (HAJRI_TEST_POSTGRES_URL), Redis (HAJRI_TEST_REDIS_URL)
 * or socat; failed instead under HAJRI_TEST_REQUIRE_ALL=1. HAJRI_E2E_KEEP=1 keeps the logs.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { printTable, waitFor } from '../../support/e2e-kit.js'
import {
  postgresAvailability,
  REDIS_URL,
  redisAvailability,
  socatAvailability,
} from '../../support/services.js'
import { DeviceToWebhookRig, PUNCH_CREATED } from './device-to-webhook-rig.js'
import {
  expectEveryPunchOnceWithOneWebhook,
  judgePunchWebhooks,
  type SentPunch,
} from './judge-punch-webhooks.js'
import type { ProxiedRequest } from './round-robin-proxy.js'

const skipReason =
  (await postgresAvailability()).skipReason ??
  (await redisAvailability()).skipReason ??
  (await socatAvailability()).skipReason

const INSTANCES = 2
const MQTT_PUNCHES = 240
const SERIAL_PUNCHES = 120
const PUNCHES_PATH = '/api/public/v1/attendance/punches'

const isUpload = (r: ProxiedRequest) =>
  r.method === 'POST' && (r.path === PUNCHES_PATH || r.path === `${PUNCHES_PATH}/batch`)
const isToken = (r: ProxiedRequest) => r.method === 'POST' && r.path === '/api/oauth/token'
const isListing = (r: ProxiedRequest) => r.method === 'GET' && r.path === PUNCHES_PATH

describe.skipIf(skipReason !== undefined)(
  `device → hajri-agent → ${INSTANCES} hajri-cloud instances (PostgreSQL + Redis) behind one address → webhook${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    const rig = new DeviceToWebhookRig({
      kind: 'postgres',
      instances: INSTANCES,
      redisUrl: REDIS_URL,
      mqttEmployees: 24,
      serialEmployees: 12,
    })
    afterAll(() => rig.close())

    it(`${MQTT_PUNCHES} MQTT and ${SERIAL_PUNCHES} serial punches through a round-robin proxy: each stored once, each told of by one verified webhook sent by one instance`, {
      timeout: 180_000,
    }, async () => {
      const startedAt = Date.now()
      await rig.setUp()
      const proxy = rig.proxy
      if (!proxy) throw new Error('the rig has no proxy')
      const [mqtt, serial] = await Promise.all([
        rig.runMqttDevice(MQTT_PUNCHES),
        rig.runSerialDevice(SERIAL_PUNCHES),
      ])
      const drained = await rig.waitForAgentDrained()
      await rig.waitForWebhooks(mqtt.sent.length + serial.length)

      // Each dispatcher on its own: the other instance frozen, a punch posted to this one is sent by it.
      const probes: SentPunch[] = []
      const probeSenders: number[][] = []
      const punchedAtMs = Math.floor(Date.now() / 1000) * 1000 - 3600_000
      for (let i = 0; i < INSTANCES; i++) {
        const probe: SentPunch = {
          via: 'api',
          deviceId: `e2e-probe-${i + 1}`,
          employeeCode: `P00${i + 1}`,
          punchType: 'IN',
          punchedAtMs: punchedAtMs + i * 1000,
          externalId: `e2e-probe-${i + 1}`,
        }
        probes.push(probe)
        rig.signalOthers(i, 'SIGSTOP')
        try {
          const stored = await rig.postPunch(i, probe)
          await rig.receiver.waitFor(
            () => rig.receiver.received.some((r) => r.json?.data.id === stored.id),
            30_000,
            `the webhook of the punch posted to instance ${i + 1} alone`,
          )
          const webhook = rig.receiver.received.find((r) => r.json?.data.id === stored.id)
          probeSenders.push(await rig.sendersOf(String(webhook?.headers['webhook-id'])))
        } finally {
          rig.signalOthers(i, 'SIGCONT')
        }
      }
      const sent = [...mqtt.sent, ...serial, ...probes]
      const record = await rig.waitForWebhooks(sent.length)
      // An instance logs a delivery just after recording it: let the last lines come in. A delivery
      // that no instance ever logs is reported by the assertions below, not by this wait.
      await waitFor(
        () => record.deliveries.every((d) => rig.deliveredBy.has(d.id)),
        'every delivery logged',
        {
          timeoutMs: 10_000,
        },
      ).catch(() => {})

      const log = await rig.readPunchLog()
      const exits = await rig.stopAll()
      const received = rig.receiver.received
      const verdict = judgePunchWebhooks({
        sent,
        stored: log.punches,
        received,
        secret: rig.endpoint.secret,
        eventType: PUNCH_CREATED,
      })
      const sentBy = record.deliveries.map((d) => rig.deliveredBy.get(d.id) ?? [])
      const deliveredPerInstance = rig.clouds.map((_, i) => sentBy.filter((s) => s.includes(i)).length)
      const listings = proxy.requests.filter(isListing)
      const perInstance = (counts: number[]) => counts.join(' / ')
      printTable(`device → agent → ${INSTANCES} cloud instances → webhook, PostgreSQL + Redis`, {
        'MQTT punches published / PUBACKed': `${mqtt.published} / ${mqtt.sent.length}`,
        'serial lines written': serial.length,
        'punches posted to one instance alone': probes.length,
        'in the punch log (public API)': log.punches.length,
        'webhooks received / verified': `${received.length} / ${verdict.counts.verified}`,
        'missing / duplicated / altered / strangers': `${verdict.missing.length} / ${verdict.duplicated.length} / ${verdict.altered.length} / ${verdict.strangers.length}`,
        'webhooks repeated (id / punch) / untold': `${verdict.repeatedWebhookIds.length} / ${verdict.repeatedPunchIds.length} / ${verdict.untold.length}`,
        'uploads per instance (proxy)': perInstance(proxy.served(isUpload)),
        'token requests per instance (proxy)': perInstance(proxy.served(isToken)),
        'listing requests per instance (proxy)': perInstance(proxy.served(isListing)),
        'webhooks sent per instance (logs)': perInstance(deliveredPerInstance),
        'sent by no or several instances': sentBy.filter((s) => s.length !== 1).length,
        'listing RateLimit-Remaining': log.remaining.join(', '),
        'agent dead letters': drained.deadLetters.count,
        'agent / cloud error lines': `${rig.agent?.errors.length} / ${perInstance(rig.clouds.map((c) => c.errors.length))}`,
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })

      expect(exits, 'exit codes of SIGTERM stops').toEqual({ agent: 0, clouds: rig.clouds.map(() => 0) })
      expect(rig.agent?.unexpectedExits).toEqual([])
      expect(rig.clouds.flatMap((c) => c.unexpectedExits)).toEqual([])
      expect(mqtt.sent, 'every MQTT punch published was PUBACKed').toHaveLength(mqtt.published)
      expect(drained.deadLetters.count, 'punches the agent parked as dead letters').toBe(0)
      expectEveryPunchOnceWithOneWebhook(verdict)
      expect(record.deliveries).toHaveLength(sent.length)
      expect(record.deliveries.filter((d) => d.status !== 'succeeded' || d.attempts !== 1)).toEqual([])

      // One address, both instances behind it: each stored some of the agent's uploads, and nothing
      // the proxy passed on failed.
      for (const [i, n] of proxy.served(isUpload).entries())
        expect(n, `uploads served by instance ${i + 1}`).toBeGreaterThan(0)
      expect(
        proxy.requests.filter((r) => r.status >= 300).map((r) => `${r.method} ${r.path} ${r.status}`),
      ).toEqual([])
      // Each delivery was sent by exactly one instance; each dispatcher sent its probe on its own.
      expect(sentBy.filter((s) => s.length !== 1)).toEqual([])
      expect(probeSenders).toEqual(rig.clouds.map((_, i) => [i]))
      // Rate-limit counters shared through Redis: one count per listing request, whichever instance
      // (the read key's first use opened its one-minute window just before; its pages follow at once).
      expect(new Set(listings.map((r) => r.upstream)).size, 'listing requests reached both instances').toBe(
        INSTANCES,
      )
      expect(log.remaining).toEqual(log.remaining.map((_, k) => (log.remaining[0] as number) - k))
      expect(rig.agent?.errors.map((e) => e.msg)).toEqual([])
      expect(rig.clouds.flatMap((c) => c.errors.map((e) => e.msg))).toEqual([])
    })
  },
)
