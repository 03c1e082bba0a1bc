/**
 * End to end: device (serial pseudo-terminal and MQTT) → agent → cloud → webhook receiver, with
 * Standard Webhooks signatures verified, on SQLite (this file) and on PostgreSQL + Redis with two
 * cloud instances behind one address (device-to-webhook-cluster.test.ts).
 *
 * One `hajri-cloud serve` child on a fresh SQLite file; the hajri-agent child with its embedded MQTT
 * broker and a serial port (socat pty pair, real serialport bindings); an MQTT device publishing QoS 1
 * JSON punches and a serial device writing ZKTeco ATTLOG lines, at the same time, for employees of
 * their own; a webhook endpoint subscribed to attendance.punch.created on a local receiver.
 *
 * Judged at the end (judge-punch-webhooks.ts): every punch the devices sent (MQTT: PUBACKed;
 * serial: written) is in the punch log read through GET /api/public/v1/attendance/punches exactly
 * once, with its employee, type, instant and device; every delivery verifies with the standardwebhooks
 * package and the endpoint's secret (and fails with its body altered); exactly one per punch, by
 * webhook-id and by the punch id in its data, whose data is the stored punch; no duplicates anywhere.
 *
 * Skipped with its reason without socat; failed instead under HAJRI_TEST_REQUIRE_ALL=1.
 * HAJRI_E2E_KEEP=1 keeps the directory with the cloud's and the agent's logs.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { printTable } from '../../support/e2e-kit.js'
import { socatAvailability } from '../../support/services.js'
import { DeviceToWebhookRig, PUNCH_CREATED } from './device-to-webhook-rig.js'
import { expectEveryPunchOnceWithOneWebhook, judgePunchWebhooks } from './judge-punch-webhooks.js'

const socat = await socatAvailability()

const MQTT_PUNCHES = 240
const SERIAL_PUNCHES = 120

describe.skipIf(socat.skipReason !== undefined)(
  `device → hajri-agent → hajri-cloud (SQLite) → webhook${socat.skipReason ? ` (skipped: ${socat.skipReason})` : ''}`,
  () => {
    const rig = new DeviceToWebhookRig({
      kind: 'sqlite',
      instances: 1,
      mqttEmployees: 24,
      serialEmployees: 12,
    })
    afterAll(() => rig.close())

    it(`${MQTT_PUNCHES} MQTT and ${SERIAL_PUNCHES} serial punches: each stored once, each told of by one verified webhook`, {
      timeout: 180_000,
    }, async () => {
      const startedAt = Date.now()
      await rig.setUp()
      const [mqtt, serial] = await Promise.all([
        rig.runMqttDevice(MQTT_PUNCHES),
        rig.runSerialDevice(SERIAL_PUNCHES),
      ])
      const sent = [...mqtt.sent, ...serial]
      const drained = await rig.waitForAgentDrained()
      const record = await rig.waitForWebhooks(sent.length)
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
      const [cloud] = rig.clouds
      printTable('device → agent → cloud → webhook, SQLite', {
        'MQTT punches published': mqtt.published,
        'MQTT punches PUBACKed': mqtt.sent.length,
        'serial lines written': serial.length,
        'in the punch log (public API)': log.punches.length,
        'webhooks received': received.length,
        'webhooks verified': verdict.counts.verified,
        'missing / duplicated / altered / strangers': `${verdict.missing.length} / ${verdict.duplicated.length} / ${verdict.altered.length} / ${verdict.strangers.length}`,
        'webhooks repeated (id / punch) / untold': `${verdict.repeatedWebhookIds.length} / ${verdict.repeatedPunchIds.length} / ${verdict.untold.length}`,
        'agent dead letters': drained.deadLetters.count,
        'agent / cloud error lines': `${rig.agent?.errors.length} / ${cloud?.errors.length}`,
        seconds: Math.round((Date.now() - startedAt) / 1000),
      })

      expect(exits, 'exit codes of SIGTERM stops').toEqual({ agent: 0, clouds: [0] })
      expect(rig.agent?.unexpectedExits).toEqual([])
      expect(cloud?.unexpectedExits).toEqual([])
      expect(mqtt.sent, 'every MQTT punch published was PUBACKed').toHaveLength(mqtt.published)
      expect(drained.deadLetters.count, 'punches the agent parked as dead letters').toBe(0)
      expectEveryPunchOnceWithOneWebhook(verdict)
      // The delivery log agrees: one delivery per punch event, each succeeded at its first attempt.
      expect(record.events).toHaveLength(sent.length)
      expect(record.deliveries).toHaveLength(sent.length)
      expect(record.deliveries.filter((d) => d.status !== 'succeeded' || d.attempts !== 1)).toEqual([])
      expect(rig.agent?.errors.map((e) => e.msg)).toEqual([])
      expect(cloud?.errors.map((e) => e.msg)).toEqual([])
    })
  },
)
