/**
 * `hajri-agent simulate --mqtt` against other brokers than the plain embedded one: the
 * agent's broker over TLS (mqtts://), and Mosquitto with a subscriber that must receive every punch
 * as the MQTT JSON payload (docs/decisions/0030-mqtt-json-payload.md). Each is skipped with a reason when its
 * tool or service is absent (failed under HAJRI_TEST_REQUIRE_ALL=1 for Mosquitto).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectAsync } from 'mqtt'
import { afterEach, describe, expect, it } from 'vitest'
import { MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import { MOSQUITTO_URL, mosquittoAvailability } from '../../support/services.js'
import { mqttDevice, silentLog, startTestAgent, uniqueName } from '../inputs/mqtt-test-agent.js'
import { makeTestCertificates, opensslSkipReason } from '../inputs/mqtt-test-certificates.js'
import {
  cliInProcess,
  hajriAgent,
  jsonPunchLines,
  punchKeys as keys,
  killChildren,
  until,
} from './simulator-test-agent.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  killChildren()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const openssl = await opensslSkipReason()

describe.skipIf(openssl !== undefined)(
  `simulate --mqtt mqtts://${openssl ? ` (skipped: ${openssl})` : ''}`,
  () => {
    async function tlsBroker() {
      const dir = await mkdtemp(join(tmpdir(), 'hajri-simulate-tls-'))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      const certs = await makeTestCertificates(dir)
      const agent = await startTestAgent([mqttDevice('gate-1', 'punches/gate-1')])
      cleanups.push(() => agent.close())
      const input = new MqttEmbeddedInput({
        config: {
          host: '127.0.0.1',
          port: 0,
          users: [],
          tls: { certFile: certs.serverCertFile, keyFile: certs.serverKeyFile },
        },
        devices: [mqttDevice('gate-1', 'punches/gate-1')],
        sink: agent.intake,
        events: agent.events,
        log: silentLog,
      })
      await input.start()
      cleanups.push(() => input.stop())
      return { agent, certs, url: `mqtts://127.0.0.1:${input.address()?.port}` }
    }

    it('connects over TLS to a broker whose CA Node is given (NODE_EXTRA_CA_CERTS)', async () => {
      const { agent, certs, url } = await tlsBroker()
      const run = hajriAgent(['simulate', '--mqtt', url, '--topic', 'punches/gate-1', '--count', '3'], {
        NODE_EXTRA_CA_CERTS: certs.caFile,
      })
      expect(await run.exited).toEqual({ code: 0, signal: null })
      expect(run.stdout()).toMatch(/summary: 3 sent, 3 acknowledged/)
      expect(await agent.punches()).toHaveLength(3)
    })

    it('refuses a certificate it cannot verify, with one line and exit 1', async () => {
      const { agent, url } = await tlsBroker()
      const run = cliInProcess(['simulate', '--mqtt', url, '--topic', 'punches/gate-1'])
      expect(await run.done).toBe(1)
      expect(run.stderr()).toMatch(
        new RegExp(
          `^hajri-agent: cannot connect to the MQTT broker at ${url}: [^\\n]*certificate[^\\n]*\\n$`,
        ),
      )
      expect(await agent.punches()).toEqual([])
    })
  },
)

const mosquitto = await mosquittoAvailability()

describe.skipIf(mosquitto.skipReason !== undefined)(
  `simulate --mqtt against Mosquitto${mosquitto.skipReason ? ` (skipped: ${mosquitto.skipReason})` : ''}`,
  () => {
    it('publishes each punch at QoS 1 as the MQTT JSON payload; a subscriber gets them all', async () => {
      const topic = uniqueName('hajri-simulate')
      // The address may carry credentials: those go to --username and --password-file.
      const broker = new URL(MOSQUITTO_URL)
      const login: string[] = []
      const dir = await mkdtemp(join(tmpdir(), 'hajri-simulate-'))
      cleanups.push(() => rm(dir, { recursive: true, force: true }))
      if (broker.username) {
        const file = join(dir, 'mosquitto.pass')
        await writeFile(file, decodeURIComponent(broker.password))
        login.push('--username', decodeURIComponent(broker.username), '--password-file', file)
        broker.username = ''
        broker.password = ''
      }
      const subscriber = await connectAsync(MOSQUITTO_URL, { reconnectPeriod: 0 })
      cleanups.push(() => subscriber.endAsync())
      const received: { payload: string; qos: number }[] = []
      subscriber.on('message', (_topic, payload, packet) =>
        received.push({ payload: payload.toString(), qos: packet.qos }),
      )
      await subscriber.subscribeAsync(topic, { qos: 1 })

      const run = cliInProcess([
        'simulate',
        '--mqtt',
        broker.href,
        '--topic',
        topic,
        ...login,
        '--count',
        '20',
        '--json',
      ])
      expect(await run.done).toBe(0)
      const printed = jsonPunchLines(run.stdout())
      expect(printed).toHaveLength(20)
      await until(() => received.length >= 20, 'the subscriber to get every punch')
      expect(received.every((m) => m.qos === 1)).toBe(true)
      const payloads = received.map((m) => JSON.parse(m.payload))
      for (const payload of payloads)
        expect(Object.keys(payload)).toEqual(['employeeCode', 'punchType', 'punchedAt'])
      expect(keys(payloads)).toEqual(keys(printed))
      expect(payloads.every((p) => /[+-]05:30$/.test(p.punchedAt))).toBe(true)
    })
  },
)
