import { createHash, timingSafeEqual } from 'node:crypto'
import type { EventEmitter } from 'node:events'
import { readFile } from 'node:fs/promises'
import net, { type AddressInfo, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import tls from 'node:tls'
import {
  Aedes,
  type AedesOptions,
  type AuthErrorCode,
  type AuthenticateError,
  type Client,
  type PublishPacket,
} from 'aedes'
import type { Logger } from 'pino'
import type { AgentConfig, DeviceConfig } from '../config/schema.js'
import type { EventBus } from '../events.js'
import type { PunchSink } from '../intake/punch-sink.js'
import { acceptSafely, MqttInputLog } from './mqtt-input-log.js'
import { guardPacketSize, MAX_MQTT_PACKET_BYTES } from './mqtt-packet-guard.js'
import { TopicMatcher } from './topic-matcher.js'

export type EmbeddedBrokerConfig = NonNullable<NonNullable<AgentConfig['mqtt']>['embedded']>

interface MqttEmbeddedInputOptions {
  /** host, port, optional tls (PEM files) and users (passwords already read from their files). */
  config: EmbeddedBrokerConfig
  /** All devices; those with `mqtt.topic` are served. */
  devices: readonly DeviceConfig[]
  sink: PunchSink
  events: EventBus
  log: Logger
}

/** MQTT 3.1.1 §3.2.2.3 CONNACK return code 5: "Connection Refused, not authorized". */
const NOT_AUTHORIZED = 5 as AuthErrorCode
/** MQTT 3.1.1 §3.2.2.3 CONNACK return code 2: "Connection Refused, identifier rejected". */
const IDENTIFIER_REJECTED = 2 as AuthErrorCode

/** Why a PUBLISH got no PUBACK. aedes closes the connection on it; the device sends the punch again. */
class PublishRefused extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
    this.name = 'PublishRefused'
  }
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest()
const NO_PASSWORD = sha256('\u0000no user\u0000')

type Outcome = { ok: true } | { ok: false; err: unknown }

/**
 * The embedded MQTT broker: devices publish punches to the agent itself.
 *
 * A punch is PUBACKed only once durable (docs/decisions/0024-ack-after-fsync.md). In aedes,
 * `authorizePublish` is the one hook that runs before the PUBACK (lib/handlers/publish.js runs
 * authorizePublish, then enqueuePublish, which writes the PUBACK), so the punch is handed to the sink there
 * and the callback called only when `accept` has resolved.
 *
 * When `accept` fails (SpoolFullError, or any other error) the callback gets the error. aedes then
 * sends no PUBACK and closes the connection (nextBatch → client 'error' → _onError); MQTT 3.1.1
 * §4.4 has the device resend the unacknowledged PUBLISH when it reconnects, by when there may be
 * room. MQTT 3.1.1 has no negative PUBACK, so dropping the connection is the only refusal there is.
 *
 * Decisions:
 * - A topic that maps to no device is acknowledged and not stored (logged once per topic): refusing
 *   would make the device resend it forever, and no configuration change would come from that.
 * - Retain is cleared on punch topics: a punch is an event, not state, and a retained copy would be
 *   handed to later subscribers. An empty retained payload (clearing a retained message) is
 *   acknowledged and not stored.
 * - No one may subscribe to a punch topic: punches are personal data and the broker exists only to
 *   receive them. Other topics (e.g. a device's own command topic) may be subscribed.
 * - QoS 0 punches are stored too, with a warning once per device: nothing acknowledges them, so the
 *   no-loss guarantee needs QoS 1.
 * - PUBACKs go out in the order the PUBLISHes came in on a connection (MQTT 3.1.1 §4.6,
 *   [MQTT-4.6.0-2]), even though their accepts run concurrently (which lets the spool group them).
 * - deviceState: a device is `connected` while at least one client has published for it, or has
 *   connected with its device id as username or clientId; `disconnected` when the last one goes.
 * - A client id belongs to a user (with mqtt.embedded.users). MQTT 3.1.1 §3.1.4 has the server
 *   close an existing connection with the same client id ([MQTT-3.1.4-2]), so a device's user
 *   could otherwise keep another device offline by connecting with its id, again and again. A
 *   CONNECT is refused (CONNACK 2, identifier rejected) when its client id is held by a connection
 *   of another user, or is the id of a device bound to another user (devices[].mqtt.username).
 *   The same user reconnecting takes over, as MQTT says: a device that lost its connection
 *   without noticing must get back in.
 */
export class MqttEmbeddedInput {
  private readonly matcher: TopicMatcher
  private readonly log: Logger
  private readonly inputLog: MqttInputLog
  private readonly mqttDeviceIds: ReadonlySet<string>
  /** username → SHA-256 of the password, so comparisons are constant-time and length-blind. */
  private readonly users = new Map<string, Buffer>()
  private broker: Aedes | undefined
  private server: net.Server | tls.Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly inflight = new Set<Promise<void>>()
  private readonly ackTails = new WeakMap<Client, Promise<void>>()
  private readonly usernames = new WeakMap<Client, string>()
  /** clientId → the authenticated connection that holds it, until its socket closes. */
  private readonly clientIdHolders = new Map<string, { client: Client; username: string }>()
  /** deviceId → the one username allowed to publish its punches (devices[].mqtt.username). */
  private readonly owners = new Map<string, string>()
  private readonly clientDevices = new WeakMap<Client, Set<string>>()
  private readonly deviceClients = new Map<string, Set<Client>>()
  private stopping = false

  constructor(private readonly options: MqttEmbeddedInputOptions) {
    this.matcher = new TopicMatcher(options.devices)
    this.mqttDeviceIds = new Set(this.matcher.routes.map((r) => r.deviceId))
    this.log = options.log.child({ component: 'mqtt-embedded' })
    this.inputLog = new MqttInputLog(this.log)
    for (const user of options.config.users) this.users.set(user.username, sha256(user.password))
    for (const device of options.devices)
      if (device.mqtt?.username) this.owners.set(device.id, device.mqtt.username)
  }

  /** Where the broker listens (with port 0, the port the system chose). */
  address(): AddressInfo | undefined {
    const address = this.server?.address()
    return address && typeof address === 'object' ? address : undefined
  }

  async start(): Promise<void> {
    if (this.broker) throw new Error('MqttEmbeddedInput already started')
    this.stopping = false
    const { config } = this.options
    const secure = config.tls
      ? {
          cert: await readFile(config.tls.certFile),
          key: await readFile(config.tls.keyFile),
          ca: config.tls.caFile ? await readFile(config.tls.caFile) : undefined,
        }
      : undefined

    const brokerOptions: AedesOptions = {
      authenticate: (client, username, password, done) => this.authenticate(client, username, password, done),
      authorizePublish: (client, packet, done) => this.authorizePublish(client, packet, done),
      authorizeSubscribe: (client, sub, done) => {
        if (this.matcher.overlapsAny(sub.topic)) {
          this.log.warn({ clientId: client.id, topic: sub.topic }, 'subscription to punch topics refused')
          done(null, null) // MQTT 3.1.1 §3.9.3: SUBACK return code 0x80 for this filter
          return
        }
        done(null, sub)
      },
    }
    const broker = new Aedes(brokerOptions)
    broker.on('clientReady', (client) => {
      const username = this.usernames.get(client)
      for (const id of [username, client.id]) if (id && this.mqttDeviceIds.has(id)) this.link(client, id)
    })
    broker.on('clientDisconnect', (client) => this.unlink(client))
    broker.on('clientError', (client, err) => {
      if (err instanceof PublishRefused)
        this.log.debug({ clientId: client.id }, 'connection closed: a punch was refused')
      else this.log.info({ clientId: client.id, err }, 'client connection error')
    })
    broker.on('connectionError', (_client, err) => this.log.info({ err }, 'connection error before CONNECT'))
    // aedes emits 'error' on persistence failures; unheard, an EventEmitter 'error' would throw.
    ;(broker as EventEmitter).on('error', (err: Error) => this.log.error({ err }, 'broker error'))
    await broker.listen()

    // Every connection, plain or (decrypted) TLS, is watched for oversized packets.
    const handle = (stream: Duplex) => {
      guardPacketSize(stream, MAX_MQTT_PACKET_BYTES, (announced) => {
        this.log.warn({ announced, max: MAX_MQTT_PACKET_BYTES }, 'MQTT packet too large: connection closed')
        stream.destroy()
      })
      broker.handle(stream)
    }
    const server = secure
      ? tls.createServer(
          {
            cert: secure.cert,
            key: secure.key,
            ca: secure.ca,
            // Schema: "With caFile, clients must present a certificate it signed."
            requestCert: secure.ca !== undefined,
            rejectUnauthorized: secure.ca !== undefined,
            minVersion: 'TLSv1.2',
          },
          handle,
        )
      : net.createServer(handle)
    // A socket that never completes TLS or never sends CONNECT is not an aedes client yet, and
    // would hold server.close() open: stop() destroys whatever is left.
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket)
      socket.once('close', () => this.sockets.delete(socket))
    })
    if (server instanceof tls.Server) {
      server.on('tlsClientError', (err) => this.log.info({ err }, 'TLS handshake failed'))
    }
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(config.port, config.host, () => {
          server.off('error', reject)
          resolve()
        })
      })
    } catch (err) {
      await new Promise<void>((resolve) => broker.close(() => resolve()))
      throw err
    }
    server.on('error', (err) => this.log.error({ err }, 'listener error'))
    this.broker = broker
    this.server = server
    this.log.info(
      { address: this.address(), tls: secure !== undefined, users: this.users.size },
      'embedded MQTT broker listening',
    )
    if (this.users.size === 0) {
      this.log.warn('no mqtt.embedded.users: any client may connect and publish punches')
    }
    for (const deviceId of this.mqttDeviceIds) {
      this.options.events.emit('deviceState', { deviceId, state: 'waiting', detail: 'no MQTT client yet' })
    }
  }

  /**
   * Stops listening, lets punches being stored get their PUBACK, then closes every connection.
   * PUBLISHes arriving meanwhile are refused (not acknowledged): their devices resend them later.
   */
  async stop(): Promise<void> {
    const { broker, server } = this
    if (!broker || !server) return
    this.stopping = true
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight])
    // mqtt-packet corks the socket and writes a PUBACK on the next tick; closing now would lose it.
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise<void>((resolve) => broker.close(() => resolve()))
    for (const socket of this.sockets) socket.destroy()
    await closed
    this.broker = undefined
    this.server = undefined
    this.log.info('embedded MQTT broker stopped')
  }

  private authenticate(
    client: Client,
    username: string | undefined,
    password: Buffer | undefined,
    done: (error: AuthenticateError | null, success: boolean | null) => void,
  ): void {
    if (this.users.size === 0) {
      done(null, true)
      return
    }
    const expected = username === undefined ? undefined : this.users.get(username)
    // Compare even for an unknown user, so the time taken does not tell which usernames exist.
    const matches = timingSafeEqual(sha256(password ?? Buffer.alloc(0)), expected ?? NO_PASSWORD)
    if (!expected || !matches || username === undefined) {
      this.log.warn({ clientId: client.id, username }, 'connection refused: unknown user or wrong password')
      const err = new Error('not authorized') as AuthenticateError
      err.returnCode = NOT_AUTHORIZED
      done(err, false)
      return
    }
    const taken = this.clientIdTakenFrom(client.id, username)
    if (taken !== undefined) {
      this.log.warn(
        { clientId: client.id, username, holder: taken },
        'connection refused: client id of another user',
      )
      const err = new Error('identifier rejected') as AuthenticateError
      err.returnCode = IDENTIFIER_REJECTED
      done(err, false)
      return
    }
    this.usernames.set(client, username)
    this.holdClientId(client, username)
    done(null, true)
  }

  /** The other user the client id belongs to, or undefined when `username` may use it. */
  private clientIdTakenFrom(clientId: string, username: string): string | undefined {
    const owner = this.owners.get(clientId)
    if (owner !== undefined && owner !== username) return owner
    const holder = this.clientIdHolders.get(clientId)
    if (holder && !holder.client.closed && holder.username !== username) return holder.username
    return undefined
  }

  /**
   * Claimed at authentication, not when aedes registers the client: between the two, persistence
   * calls let another CONNECT with the same id be authenticated, and it would then take over.
   */
  private holdClientId(client: Client, username: string): void {
    const clientId = client.id
    this.clientIdHolders.set(clientId, { client, username })
    const release = () => {
      if (this.clientIdHolders.get(clientId)?.client === client) this.clientIdHolders.delete(clientId)
    }
    // A holder whose client has closed counts for nothing (clientIdTakenFrom); this only frees memory.
    if (client.conn.destroyed) release()
    else client.conn.once('close', release)
  }

  private authorizePublish(
    client: Client | null,
    packet: PublishPacket,
    done: (error?: Error | null) => void,
  ): void {
    const { topic } = packet
    // aedes' own default, kept: clients do not publish as the broker.
    if (topic.startsWith('$SYS')) {
      done(new PublishRefused('$SYS topic is reserved'))
      return
    }
    const deviceId = this.matcher.match(topic)
    if (deviceId === undefined) {
      this.inputLog.unknownTopic(topic, { clientId: client?.id })
      done(null)
      return
    }
    // A will is published by aedes when a client vanishes; on a punch topic it is not a punch.
    if (client === null || (client as Client & { will?: unknown }).will === packet) {
      this.log.warn({ deviceId, topic }, 'will message on a punch topic not published')
      done(new PublishRefused('will on a punch topic'))
      return
    }
    const retained = packet.retain
    packet.retain = false
    const frame = typeof packet.payload === 'string' ? Buffer.from(packet.payload) : packet.payload
    if (retained) {
      this.inputLog.retained(
        deviceId,
        'device publishes punches with retain set: retain ignored (a punch is an event, not state)',
      )
      if (frame.length === 0) {
        done(null) // clears a retained message: there is none on punch topics, and nothing to store
        return
      }
    }
    if (this.stopping) {
      done(new PublishRefused('the agent is stopping'))
      return
    }
    // A device bound to a user takes punches from that user only: another device's credentials
    // cannot be used to forge its punches.
    const owner = this.owners.get(deviceId)
    if (owner !== undefined && this.usernames.get(client) !== owner) {
      this.log.warn(
        { deviceId, clientId: client.id, username: this.usernames.get(client) },
        "publish refused: not this device's user",
      )
      done(new PublishRefused("not this device's user"))
      return
    }
    if (packet.qos === 0) this.inputLog.qos0(deviceId)
    this.link(client, deviceId)

    const outcome: Promise<Outcome> = acceptSafely(this.options.sink, deviceId, frame).then(
      () => ({ ok: true }),
      (err: unknown) => ({ ok: false, err }),
    )
    const previous = this.ackTails.get(client)
    const turn = previous ? previous.then(() => outcome) : outcome
    const acked = turn
      .then((result) => {
        if (result.ok) {
          this.inputLog.stored()
          done(null)
        } else {
          this.inputLog.notStored(deviceId, result.err)
          done(new PublishRefused('punch not stored', result.err))
        }
      })
      .catch((err: unknown) => this.log.error({ err, deviceId }, 'acknowledging a punch failed'))
      .finally(() => this.inflight.delete(acked))
    this.inflight.add(acked)
    this.ackTails.set(client, acked)
  }

  private link(client: Client, deviceId: string): void {
    if (client.closed) return
    let devices = this.clientDevices.get(client)
    if (!devices) {
      devices = new Set()
      this.clientDevices.set(client, devices)
    }
    if (devices.has(deviceId)) return
    devices.add(deviceId)
    let clients = this.deviceClients.get(deviceId)
    if (!clients) {
      clients = new Set()
      this.deviceClients.set(deviceId, clients)
    }
    clients.add(client)
    if (clients.size === 1) {
      this.options.events.emit('deviceState', {
        deviceId,
        state: 'connected',
        detail: `MQTT client ${client.id}`,
      })
    }
  }

  private unlink(client: Client): void {
    const devices = this.clientDevices.get(client)
    if (!devices) return
    this.clientDevices.delete(client)
    for (const deviceId of devices) {
      const clients = this.deviceClients.get(deviceId)
      if (!clients) continue
      clients.delete(client)
      if (clients.size === 0) {
        this.deviceClients.delete(deviceId)
        this.options.events.emit('deviceState', {
          deviceId,
          state: 'disconnected',
          detail: `MQTT client ${client.id} disconnected`,
        })
      }
    }
  }
}
