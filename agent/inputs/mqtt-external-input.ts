import { readFile } from 'node:fs/promises'
import { connect, type IConnackPacket, type IPublishPacket, type MqttClient } from 'mqtt'
import type { Logger } from 'pino'
import type { AgentConfig, DeviceConfig } from '../config/schema.js'
import type { EventBus } from '../events.js'
import type { PunchSink } from '../intake/punch-sink.js'
import { acceptSafely, MqttInputLog } from './mqtt-input-log.js'
import { TopicMatcher } from './topic-matcher.js'

type ExternalBrokerConfig = NonNullable<NonNullable<AgentConfig['mqtt']>['external']>

interface MqttExternalInputOptions {
  /** url, fixed clientId, username/password (passwordFile already read), caFile. */
  config: ExternalBrokerConfig
  /** All devices; those with `mqtt.topic` are subscribed to. */
  devices: readonly DeviceConfig[]
  sink: PunchSink
  events: EventBus
  log: Logger
  /** Reconnect delays: the first, and the most it grows to (doubling). Default 1 s and 60 s. */
  reconnect?: { initialMs: number; maxMs: number }
  /** For the jitter of reconnect delays (tests). */
  random?: () => number
}

/**
 * The agent as a client of the site's broker.
 *
 * - A persistent session: fixed clientId, `clean: false`, MQTT 3.1.1. (With MQTT 5 a session would
 *   also need a Session Expiry Interval, or the broker would drop it at disconnect.) The broker
 *   keeps QoS 1 punches for the agent while it is away and resends unacknowledged ones when it
 *   comes back (MQTT 3.1.1 §4.4). deploy/mosquitto.conf lists the settings this relies on.
 * - The PUBACK only once durable (docs/decisions/0024-ack-after-fsync.md): it is sent when mqtt.js's
 *   `handleMessage` callback is called (handlers/publish.js: handleMessage(packet, cb) → cb →
 *   _sendPacket(puback)), so the callback is called only once `accept` has resolved. mqtt.js handles one
 *   incoming packet at a time and waits for that callback before the next, so punches are stored one after
 *   another, in order.
 * - When `accept` fails (SpoolFullError, or any other error) the callback is never called: no
 *   PUBACK, and the connection is dropped. Calling it with an error would send no PUBACK either but
 *   keep the connection, and the broker resends an unacknowledged message only on a new
 *   connection: the punch would sit in the broker's in-flight window until the next reconnect. The
 *   agent reconnects after a backoff that keeps growing while punches are refused, and the broker
 *   then resends the punch, stored once there is room.
 * - Reconnects forever, with doubling, jittered delays (mqtt.js's own reconnect is fixed-period).
 * - A message with the retain flag set was sent because the agent (re)subscribed, from the broker's
 *   retained store (§3.3.1.3: messages for an established subscription arrive with retain 0, queued
 *   ones included). The live copy of that punch was stored when it was published, so the retained
 *   copy is acknowledged and not stored again.
 * - A topic that maps to no device (a device removed from the configuration whose subscription
 *   lives on in the session) is acknowledged and not stored, logged once per topic.
 * - deviceState: every MQTT device follows the broker connection.
 */
export class MqttExternalInput {
  private readonly matcher: TopicMatcher
  private readonly log: Logger
  private readonly inputLog: MqttInputLog
  private readonly reconnect: { initialMs: number; maxMs: number }
  private client: MqttClient | undefined
  private reconnectTimer: NodeJS.Timeout | undefined
  private attempts = 0
  /** A punch was refused on this connection or since: keep backing off until one is stored. */
  private refusing = false
  private connected = false
  private lastError: string | undefined
  private readonly inflight = new Set<Promise<void>>()
  private stopping = false

  constructor(private readonly options: MqttExternalInputOptions) {
    this.matcher = new TopicMatcher(options.devices)
    this.log = options.log.child({ component: 'mqtt-external', clientId: options.config.clientId })
    this.inputLog = new MqttInputLog(this.log)
    this.reconnect = options.reconnect ?? { initialMs: 1000, maxMs: 60_000 }
  }

  async start(): Promise<void> {
    if (this.client) throw new Error('MqttExternalInput already started')
    this.stopping = false
    const { config } = this.options
    const ca = config.caFile ? await readFile(config.caFile) : undefined
    const client = connect(config.url, {
      clientId: config.clientId,
      clean: false,
      protocolVersion: 4,
      username: config.username,
      password: config.password,
      ca,
      keepalive: 30,
      connectTimeout: 30_000,
      reconnectPeriod: 0, // reconnects are ours (onClose), with backoff
      resubscribe: false, // subscribed on every CONNACK instead (onConnect)
      manualConnect: true,
    })
    client.handleMessage = (packet, callback) => this.handleMessage(packet, callback)
    client.on('connect', (connack) => this.onConnect(client, connack))
    client.on('close', () => this.onClose(client))
    client.on('error', (err) => {
      if (err.message !== this.lastError) this.log.warn({ err }, 'broker connection error')
      this.lastError = err.message
    })
    this.client = client
    this.log.info({ broker: redactedUrl(config.url) }, 'connecting to the site MQTT broker')
    for (const { deviceId } of this.matcher.routes) {
      this.emitState(deviceId, 'waiting', 'connecting to the site MQTT broker')
    }
    client.connect()
  }

  /**
   * Lets a punch being stored get its PUBACK, then disconnects cleanly; the broker keeps the
   * session and queues punches until the agent is back.
   */
  async stop(): Promise<void> {
    const client = this.client
    if (!client) return
    this.stopping = true
    clearTimeout(this.reconnectTimer)
    this.reconnectTimer = undefined
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight])
    await client.endAsync(!client.connected)
    this.client = undefined
    this.log.info('disconnected from the site MQTT broker')
  }

  private onConnect(client: MqttClient, connack: IConnackPacket): void {
    if (client !== this.client) return
    if (!this.refusing) this.attempts = 0
    this.connected = true
    if (!connack.sessionPresent) {
      // Expected the first time a clientId is used; later, the broker lost or expired the session.
      this.log.warn(
        'connected, but the broker had no session for this clientId: punches published while the agent was away are lost unless this is its first start (check broker persistence and persistent_client_expiration)',
      )
    } else {
      this.log.info('connected to the site MQTT broker, session resumed')
    }
    const filters = this.matcher.routes.map((r) => r.filter)
    if (filters.length === 0) return
    // Resubscribed on every connection: idempotent (§3.8.4), and it covers a broker that lost the
    // session or a device added to the configuration. A device is `connected` once its
    // subscription is granted: only then do its punches flow.
    client.subscribe(filters, { qos: 1 }, (err, _subscriptions, suback) => {
      // On a refusal mqtt.js reports an error but still hands over the SUBACK, whose return codes
      // are in the order of the filters (one SUBSCRIBE packet).
      if (!suback) {
        this.log.warn({ err }, 'subscribing failed; retried on the next connection')
        return
      }
      for (const [i, { deviceId, filter }] of this.matcher.routes.entries()) {
        const code = suback.granted[i]
        // §3.9.3: 0x80 is a refusal; QoS 0 means the broker would not resend what the agent misses.
        if (typeof code !== 'number' || code >= 0x80) {
          this.log.error({ deviceId, topic: filter, code }, 'the broker refused the subscription')
          this.emitState(deviceId, 'waiting', 'the site broker refused the subscription')
        } else if (code < 1) {
          this.log.error({ deviceId, topic: filter }, 'the broker granted QoS 0, not 1')
          this.emitState(deviceId, 'connected', 'site MQTT broker (QoS 0 granted: punches may be lost)')
        } else {
          this.emitState(deviceId, 'connected', 'site MQTT broker')
        }
      }
    })
  }

  private emitState(deviceId: string, state: 'connected' | 'disconnected' | 'waiting', detail: string): void {
    this.options.events.emit('deviceState', { deviceId, state, detail })
  }

  private onClose(client: MqttClient): void {
    if (client !== this.client) return
    if (this.connected) {
      this.connected = false
      this.log.warn({ error: this.lastError }, 'disconnected from the site MQTT broker')
      const detail = this.lastError ?? 'site broker connection closed'
      for (const { deviceId } of this.matcher.routes) this.emitState(deviceId, 'disconnected', detail)
    }
    if (this.stopping || this.reconnectTimer) return
    const ceiling = Math.min(this.reconnect.maxMs, this.reconnect.initialMs * 2 ** this.attempts)
    // Half fixed, half random: never a tight loop, and a fleet of agents does not reconnect in step.
    const delay = ceiling / 2 + ((this.options.random ?? Math.random)() * ceiling) / 2
    this.attempts = Math.min(this.attempts + 1, 30)
    this.log.debug({ delayMs: Math.round(delay) }, 'reconnecting later')
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined
      if (!this.stopping) client.reconnect()
    }, delay)
  }

  private handleMessage(packet: IPublishPacket, callback: (error?: Error) => void): void {
    const client = this.client
    if (!client || this.stopping) return // no PUBACK: resent in the next session
    const topic = packet.topic.toString()
    const deviceId = this.matcher.match(topic)
    if (deviceId === undefined) {
      this.inputLog.unknownTopic(topic, {})
      callback()
      return
    }
    if (packet.retain) {
      this.inputLog.retained(
        deviceId,
        'device publishes punches with retain set: retained copies are not stored again (the live copy was)',
      )
      callback()
      return
    }
    if (packet.qos === 0) this.inputLog.qos0(deviceId)
    const frame = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload
    const done = acceptSafely(this.options.sink, deviceId, frame)
      .then(
        () => {
          this.inputLog.stored()
          this.refusing = false
          callback()
        },
        (err: unknown) => {
          this.inputLog.notStored(deviceId, err)
          this.refusing = true
          // No PUBACK; a new connection makes the broker resend it (MQTT 3.1.1 §4.4). After a
          // turn of the event loop: mqtt-packet corks the socket until the next tick, and the
          // PUBACK of the punch before this one may still be in it.
          setImmediate(() => {
            if (client === this.client && !this.stopping) client.end(true)
          })
        },
      )
      .catch((err: unknown) => this.log.error({ err, deviceId }, 'acknowledging a punch failed'))
      .finally(() => this.inflight.delete(done))
    this.inflight.add(done)
  }
}

/** The broker URL without credentials, for logs. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url)
    parsed.username = ''
    parsed.password = ''
    return parsed.toString()
  } catch {
    return '(unparseable url)'
  }
}
