import { connect as connectTcp } from 'node:net'
import { connectAsync } from 'mqtt'
import mqttPacket from 'mqtt-packet'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import { MqttEmbeddedInput } from '../../../agent/inputs/mqtt-embedded-input.js'
import { MAX_MQTT_PACKET_BYTES } from '../../../agent/inputs/mqtt-packet-guard.js'
import type { PunchSink } from '../../../agent/intake/punch-sink.js'

const log = pino({ level: 'silent' })

describe('the embedded broker packet limit', () => {
  const accepted: Buffer[] = []
  const sink: PunchSink = {
    accept: async (_device, _transport, frame) => {
      accepted.push(frame)
      return { records: 1, spooled: 1, resent: 0, deadLettered: 0 }
    },
    rejectFrame: async () => {},
  }
  const input = new MqttEmbeddedInput({
    config: { host: '127.0.0.1', port: 0, users: [] },
    devices: [{ id: 'gate-1', mqtt: { topic: 'punches/gate-1', format: 'json' } }],
    sink,
    events: new EventBus(log),
    log,
  })
  let url: string
  beforeAll(async () => {
    await input.start()
    url = `mqtt://127.0.0.1:${input.address()?.port}`
  })
  afterAll(() => input.stop())

  it('takes a packet just under the limit', async () => {
    const client = await connectAsync(url, { reconnectPeriod: 0 })
    await client.publishAsync('punches/gate-1', Buffer.alloc(MAX_MQTT_PACKET_BYTES - 100, 65), { qos: 1 })
    await client.endAsync()
    expect(accepted.at(-1)?.length).toBe(MAX_MQTT_PACKET_BYTES - 100)
  })

  it('closes the connection as soon as a header announces more, before the body is read', async () => {
    const before = accepted.length
    const port = Number(new URL(url).port)
    const socket = connectTcp(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
    socket.write(
      mqttPacket.generate({
        cmd: 'connect',
        protocolId: 'MQTT',
        protocolVersion: 4,
        clientId: 'big',
        clean: true,
        keepalive: 0,
      }),
    )
    // A PUBLISH header announcing 10 MB, and only the first kilobyte of it.
    const header = mqttPacket.generate({
      cmd: 'publish',
      topic: 'punches/gate-1',
      payload: Buffer.alloc(10 * 1024 * 1024),
      qos: 0,
      retain: false,
      dup: false,
    })
    socket.write(header.subarray(0, 1024))
    await new Promise<void>((resolve) => socket.once('close', () => resolve()))
    expect(accepted.length).toBe(before)
  })
})
