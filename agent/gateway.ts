import { join } from 'node:path'
import type { Logger } from 'pino'
import type { AgentConfig } from './config/schema.js'
import { EventBus } from './events.js'
import { PunchIntake } from './intake/punch-intake.js'
import type { PunchSink } from './intake/punch-sink.js'
import { DeadLetters } from './spool/dead-letters.js'
import { Spool } from './spool/spool.js'
import type { AgentStatus } from './status/agent-status.js'
import { createMetrics } from './status/metrics.js'
import { StatusServer } from './status/status-server.js'
import { StatusTracker } from './status/status-tracker.js'
import { Forwarder } from './uplink/forwarder.js'
import { createHttpClient } from './uplink/http-client.js'
import { PunchUplink } from './uplink/punch-uplink.js'
import { TokenClient } from './uplink/token-client.js'

/** A part of the agent that runs: started in order, stopped in reverse (DESIGN.md §7). */
export interface Component {
  start(): Promise<void>
  stop(): Promise<void>
}

/** What the inputs are built from: they hand frames to the sink and report on the bus. */
export interface InputContext {
  config: AgentConfig
  sink: PunchSink
  events: EventBus
  log: Logger
}

export interface GatewayOptions {
  log: Logger
  /** Builds the device inputs (serial ports, MQTT); tests pass their own. */
  createInputs: (context: InputContext) => Component[]
}

/**
 * The composition root of hajri-agent (DESIGN.md §1, §7): inputs → intake → spool → forwarder →
 * cloud, with the status listener beside. Constructing does no I/O; start() brings the parts up
 * with the spool first (nothing is acknowledged before it can store) and the inputs last; stop()
 * takes them down in reverse, so no device is acknowledged after the spool has stopped.
 */
export class Gateway {
  readonly events: EventBus
  readonly spool: Spool
  readonly deadLetters: DeadLetters
  readonly tracker: StatusTracker
  private readonly forwarder: Forwarder
  private readonly statusServer: StatusServer
  private readonly inputs: Component[]
  private readonly httpClient: ReturnType<typeof createHttpClient>
  private started: Component[] = []

  constructor(
    readonly config: AgentConfig,
    options: GatewayOptions,
  ) {
    const log = options.log
    this.events = new EventBus(log)
    this.spool = new Spool({
      dir: config.spool.dir,
      maxBytes: config.spool.maxBytes,
      chunkPunches: config.spool.chunkPunches,
      log: log.child({ component: 'spool' }),
      events: this.events,
    })
    this.deadLetters = new DeadLetters({
      dir: join(config.spool.dir, 'dead-letters'),
      log: log.child({ component: 'dead-letters' }),
    })
    this.httpClient = createHttpClient(config.cloud)
    const tokens = new TokenClient({
      http: this.httpClient.http,
      clientId: config.cloud.clientId,
      clientSecret: config.cloud.clientSecret,
      scope: config.cloud.scope,
      log: log.child({ component: 'token' }),
    })
    this.forwarder = new Forwarder({
      spool: this.spool,
      deadLetters: this.deadLetters,
      uplink: new PunchUplink({ http: this.httpClient.http, tokens }),
      events: this.events,
      log: log.child({ component: 'forwarder' }),
      concurrency: config.cloud.concurrency,
      batchSize: config.cloud.batchSize,
    })
    this.tracker = new StatusTracker(
      config.devices.map((d) => ({
        id: d.id,
        transports: [...(d.mqtt ? ['mqtt'] : []), ...(d.serial ? ['serial'] : [])],
      })),
    )
    const sink = new PunchIntake({
      config,
      spool: this.spool,
      deadLetters: this.deadLetters,
      events: this.events,
      log: log.child({ component: 'intake' }),
    })
    this.inputs = options.createInputs({ config, sink, events: this.events, log })
    this.statusServer = new StatusServer({
      listen: config.status.listen,
      log: log.child({ component: 'status' }),
      status: () => this.status(),
      metrics: createMetrics(this.events, () => ({
        spoolPunches: this.spool.stats().items,
        spoolBytes: this.spool.stats().bytes,
        deadLetters: this.deadLetters.count(),
        spoolFull: this.spool.full !== undefined,
        devicesUp: Object.fromEntries(
          this.tracker.deviceStatuses().map((d) => [d.id, d.state === 'connected']),
        ),
      })),
      listDeadLetters: ({ limit, cursor, reason, deviceId }) =>
        this.deadLetters.list({
          limit,
          cursor,
          select: (entry) =>
            (reason === undefined || entry.reason === reason) &&
            (deviceId === undefined || entry.deviceId === deviceId),
        }),
      replayDeadLetters: (filter) => this.replayDeadLetters(filter),
    })
  }

  async start(): Promise<void> {
    this.tracker.follow(this.events)
    const parts: Component[] = [
      { start: () => this.spool.start(), stop: () => this.spool.stop() },
      { start: () => this.deadLetters.open(), stop: () => this.deadLetters.drain() },
      {
        start: async () => this.forwarder.start(),
        stop: async () => {
          const stopping = this.forwarder.stop()
          // Sockets first: a request hanging on the cloud would otherwise hold the stop until it times out.
          this.httpClient.close()
          await stopping
        },
      },
      this.statusServer,
      ...this.inputs,
    ]
    for (const part of parts) {
      await part.start()
      this.started.push(part)
    }
  }

  async stop(): Promise<void> {
    for (const part of this.started.reverse()) await part.stop()
    this.started = []
    this.tracker.stop()
  }

  get statusAddress(): string | undefined {
    return this.statusServer.address
  }

  /** Moves dead letters (all, or of one reason or device) back into the spool for another try. */
  replayDeadLetters(filter: { reason?: string; deviceId?: string }) {
    return this.deadLetters.replay(
      (punches) => this.spool.append(punches),
      (entry) =>
        (filter.reason === undefined || entry.reason === filter.reason) &&
        (filter.deviceId === undefined || entry.deviceId === filter.deviceId),
    )
  }

  status(): AgentStatus {
    const now = Date.now()
    const spool = this.spool.stats()
    const forwarding = this.tracker.forwardingStatus()
    if (!this.spool.full) this.tracker.spoolFullSince = null
    const devices = this.tracker.deviceStatuses()
    const alarms: string[] = []
    if (this.spool.full)
      alarms.push(`spool full (${this.spool.full.message}): MQTT punches are being refused`)
    if (spool.quarantined > 0)
      alarms.push(
        `${spool.quarantined} corrupt spool chunk(s) quarantined in ${join(this.config.spool.dir, 'quarantine')}`,
      )
    // A serial port that is gone is a device unheard. MQTT devices may connect only to publish, so
    // their coming and going is shown, not raised.
    for (const d of devices) {
      if (d.transports.includes('serial') && (d.state === 'disconnected' || d.state === 'waiting')) {
        alarms.push(`device ${d.id} ${d.state}${d.detail ? `: ${d.detail}` : ''}`)
      }
    }
    if (
      forwarding.lastError &&
      (!forwarding.lastSuccessAt || forwarding.lastError.at > forwarding.lastSuccessAt)
    ) {
      alarms.push(`cloud unreachable: ${forwarding.lastError.message}`)
    }
    return {
      agent: {
        site: this.config.site.id,
        pid: process.pid,
        startedAt: this.tracker.startedAt.toISOString(),
        uptimeSeconds: Math.round((now - this.tracker.startedAt.getTime()) / 1000),
      },
      spool: {
        punches: spool.items,
        chunks: spool.chunks,
        bytes: spool.bytes,
        maxBytes: spool.maxBytes,
        oldestUnsentAt:
          spool.oldestWrittenAt === undefined ? null : new Date(spool.oldestWrittenAt).toISOString(),
        oldestUnsentAgeSeconds:
          spool.oldestWrittenAt === undefined ? null : Math.round((now - spool.oldestWrittenAt) / 1000),
        full: this.spool.full !== undefined,
        fullSince: this.spool.full ? this.tracker.spoolFullSince : null,
        quarantinedChunks: spool.quarantined,
      },
      deadLetters: { count: this.deadLetters.count() },
      devices,
      forwarding: {
        ...forwarding,
        backlog:
          spool.items > 0
            ? {
                peak: spool.backlogPeak,
                remaining: spool.items,
                etaSeconds:
                  forwarding.ratePerSecond > 0 ? Math.round(spool.items / forwarding.ratePerSecond) : null,
              }
            : null,
      },
      alarms,
    }
  }
}
