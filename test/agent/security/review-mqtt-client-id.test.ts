/**
 * The embedded MQTT broker and client ids: MQTT closes an existing connection when a new one comes
 * with the same client id (MQTT 3.1.1 §3.1.4, [MQTT-3.1.4-2]). With users configured, a client id
 * belongs to the user who holds it: another device's credentials must not take it (and knock that
 * device offline). Real mqtt.js clients against the real broker over a real socket, punches into a
 * real spool.
 */
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt'
import { afterEach, describe, expect, it } from 'vitest'
import type { DeviceConfig } from '../../../agent/config/schema.js'
import { MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import { punchPayload, silentLog, startTestAgent } from '../inputs/mqtt-test-agent.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Polls until it holds; the bound only stops a test that would otherwise hang. */
const POLL = { timeout: 20_000, interval: 5 }

const USERS = [
  { username: 'gate-1', password: 'correct horse' },
  { username: 'gate-2', password: 'battery staple' },
]
const GATE_1 = { username: 'gate-1', password: 'correct horse' }
const GATE_2 = { username: 'gate-2', password: 'battery staple' }

const DEVICES: DeviceConfig[] = [
  { id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json', username: 'gate-1' } },
  { id: 'gate-2', mqtt: { topic: 'punches/gate-2', format: 'json', username: 'gate-2' } },
]

async function broker() {
  const agent = await startTestAgent(DEVICES)
  cleanups.push(() => agent.close())
  const input = new MqttEmbeddedInput({
    config: { host: '127.0.0.1', port: 0, users: USERS },
    devices: DEVICES,
    sink: agent.intake,
    events: agent.events,
    log: silentLog,
  })
  await input.start()
  cleanups.push(() => input.stop())
  return { agent, url: `mqtt://127.0.0.1:${input.address()?.port}` }
}

/** A device that does not reconnect by itself, with every close it sees counted. */
async function connect(url: string, options: IClientOptions) {
  const client: MqttClient = await connectAsync(url, { reconnectPeriod: 0, ...options }, false)
  cleanups.push(() => client.endAsync(true))
  const state = { closes: 0, client }
  client.on('close', () => {
    state.closes++
  })
  return state
}

const attempt = (url: string, options: IClientOptions) =>
  connectAsync(url, { reconnectPeriod: 0, ...options }, false).then(
    async (client) => {
      await client.endAsync(true)
      return 'connected'
    },
    (err: Error & { code?: number }) => `refused ${err.code}`,
  )

describe('the embedded broker ties client ids to users', () => {
  it("security review #9: refuses a CONNECT with a client id another user's connection holds, and the holder stays connected", async () => {
    const { agent, url } = await broker()
    const holder = await connect(url, { ...GATE_1, clientId: 'turnstile-a' })

    // CONNACK return code 2, "identifier rejected" (MQTT 3.1.1 §3.2.2.3), again and again.
    for (let i = 0; i < 3; i++)
      expect(await attempt(url, { ...GATE_2, clientId: 'turnstile-a' })).toBe('refused 2')

    expect(holder.closes).toBe(0)
    expect(holder.client.connected).toBe(true)
    await holder.client.publishAsync('punches/gate-1', punchPayload('E001'), { qos: 1 })
    expect((await agent.punches()).map((p) => p.deviceId)).toEqual(['gate-1'])
  })

  it('security review #9: refuses another user the client id of a device bound to a user, even while that device is away', async () => {
    const { url } = await broker()
    expect(await attempt(url, { ...GATE_2, clientId: 'gate-1' })).toBe('refused 2')
    expect(await attempt(url, { ...GATE_1, clientId: 'gate-1' })).toBe('connected')
  })

  it('security review #9: lets the same user take its own client id over (a device back after a dead connection)', async () => {
    const { agent, url } = await broker()
    const before = await connect(url, { ...GATE_1, clientId: 'turnstile-a' })
    const after = await connect(url, { ...GATE_1, clientId: 'turnstile-a' })
    await expect.poll(() => before.closes, POLL).toBeGreaterThan(0)
    await after.client.publishAsync('punches/gate-1', punchPayload('E002'), { qos: 1 })
    expect((await agent.punches()).map((p) => p.employeeCode)).toEqual(['E002'])
    // Once the holder has gone, the id is free again.
    await after.client.endAsync()
    await expect.poll(() => attempt(url, { ...GATE_2, clientId: 'turnstile-a' }), POLL).toBe('connected')
  })
})
