import { randomBytes } from 'node:crypto'
import type { IClientOptions, MqttClient } from 'mqtt'
import { type DeviceLink, DeviceUnreachableError, RecordNotDeliveredError } from './device-link.js'

interface MqttDeviceLinkOptions {
  /** mqtt://host:port or mqtts://host:port, without credentials. */
  url: string
  topic: string
  username?: string
  password?: string
  /** Lost and regained connections, for the person watching (stderr). */
  notice: (message: string) => void
  /** Seconds to wait for the broker's CONNACK (default 10). */
  connectTimeoutSeconds?: number
  /** Between reconnect attempts once connected (default 1 s). */
  reconnectMs?: number
}

/** MQTT 3.1.1 §3.2.2.3 CONNACK return codes 4 and 5: bad user name or password, not authorized. */
const REFUSED_CREDENTIALS = new Set([4, 5])

/**
 * The simulated device as an MQTT client (mqtt.js, MQTT 3.1.1): every record is a QoS 1 PUBLISH,
 * delivered when its PUBACK comes. The session is clean: a device's memory is its own punch log,
 * not the broker's session.
 *
 * mqtt.js keeps a QoS 1 PUBLISH in its outgoing store until PUBACKed and sends the store again after
 * a reconnect (client.js `_onConnect`), but a publish made while that replay runs, or while the
 * connection is down, can be failed with "Connection closed" and forgotten. A terminal keeps a
 * punch until it is acknowledged, so such a record is published again once the client reconnects;
 * the agent's punch id makes a second copy harmless.
 */
export class MqttDeviceLink implements DeviceLink {
  readonly deliveredAs = 'acknowledged'
  readonly target: string
  private client: MqttClient | undefined
  private closed = false
  private lost = false
  private readonly waiting = new Set<(err: Error) => void>()
  /** Publishes mqtt.js failed while the connection was down, made again on the next CONNACK. */
  private afterConnect: (() => void)[] = []

  constructor(private readonly options: MqttDeviceLinkOptions) {
    this.target = `${options.url} (topic ${options.topic})`
  }

  async open(): Promise<void> {
    const { connect } = await import('mqtt')
    const settings: IClientOptions = {
      clientId: `hajri-simulator-${randomBytes(4).toString('hex')}`,
      protocolVersion: 4,
      clean: true,
      connectTimeout: (this.options.connectTimeoutSeconds ?? 10) * 1000,
      reconnectPeriod: this.options.reconnectMs ?? 1000,
      ...(this.options.username !== undefined ? { username: this.options.username } : {}),
      ...(this.options.password !== undefined ? { password: this.options.password } : {}),
    }
    const client = connect(this.options.url, settings)
    // Only these listeners are removed after: mqtt.js listens on its own client too (reconnects).
    let lastError: Error | undefined
    const remember = (err: Error) => {
      lastError ??= err
    }
    let settle = { connected: () => {}, closed: () => {} }
    const connected = new Promise<void>((resolve, reject) => {
      settle = {
        connected: resolve,
        // 'error' (refused, TLS, a CONNACK refusal) comes before 'close'; a close alone is the timeout.
        closed: () => reject(lastError ?? new Error(`no answer within ${settings.connectTimeout! / 1000} s`)),
      }
    })
    client.on('error', remember)
    client.once('connect', settle.connected)
    client.once('close', settle.closed)
    try {
      await connected
    } catch (err) {
      client.end(true)
      throw new DeviceUnreachableError(
        `cannot connect to the MQTT broker at ${this.options.url}: ${reason(err)}`,
      )
    } finally {
      client.off('connect', settle.connected)
      client.off('close', settle.closed)
    }
    client.off('error', remember)
    // One notice per outage, with its first error: reconnecting every second to a broker that is
    // down would otherwise print the same refusal every second.
    let outageError: Error | undefined
    client.on('error', (err) => {
      outageError ??= err
    })
    client.on('close', () => {
      const why = outageError ? ` (${reason(outageError)})` : ''
      if (this.closed || this.lost) return
      this.lost = true
      this.options.notice(`lost the connection to ${this.options.url}${why}; reconnecting`)
    })
    client.on('connect', () => {
      outageError = undefined
      for (const publish of this.afterConnect.splice(0)) publish()
      if (!this.lost) return
      this.lost = false
      this.options.notice(`connected to ${this.options.url} again`)
    })
    this.client = client
  }

  send(record: string): Promise<void> {
    const client = this.client
    if (!client) return Promise.reject(new Error('the MQTT link is not open'))
    return new Promise<void>((resolve, reject) => {
      const giveUp = (err: Error) => {
        this.waiting.delete(giveUp)
        reject(err)
      }
      this.waiting.add(giveUp)
      const publish = () => {
        if (this.closed) return
        client.publish(this.options.topic, record, { qos: 1 }, (err) => {
          if (!this.waiting.has(giveUp)) return
          if (!err) {
            this.waiting.delete(giveUp)
            resolve()
          } else if (this.closed || err.message !== 'Connection closed')
            giveUp(new RecordNotDeliveredError(reason(err)))
          else if (client.connected) setImmediate(publish)
          else this.afterConnect.push(publish)
        })
      }
      publish()
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const abandoned = this.waiting.size > 0
    for (const giveUp of [...this.waiting])
      giveUp(new RecordNotDeliveredError('stopped before its PUBACK came'))
    const client = this.client
    if (!client) return
    // A clean DISCONNECT when all is acknowledged; else just stop (mqtt.js's clean end would wait
    // for the PUBACKs given up on).
    await client.endAsync(abandoned || !client.connected).catch(() => {})
  }
}

function reason(err: unknown): string {
  const code = (err as { code?: unknown }).code
  const message = err instanceof Error ? err.message : String(err)
  if (typeof code === 'number' && REFUSED_CREDENTIALS.has(code))
    return `${message} (check --username and --password-file)`
  return message
}
