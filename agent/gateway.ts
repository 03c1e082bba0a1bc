import { join } from 'node:path'
import type { Logger } from 'pino'
import { nowMicros } from '../shared/time.js'
import type { Component } from './component.js'
import { controlTokenPath } from './config/control-token-file.js'
import type { AgentConfig } from './config/schema.js'
import { EventBus } from './events.js'
import { parseBackfillRange } from './inputs/backfill-range.js'
import {
  type DeviceBackfill,
  type DeviceClockResult,
  DeviceCommandError,
  type DeviceCommandStatus,
  type DeviceControl,
  type DeviceReport,
  type DeviceReporter,
  isDeviceBackfill,
  isDeviceControl,
  isDeviceReporter,
} from './inputs/device-report.js'
import type { InputContext } from './inputs/input-context.js'
import { PunchIntake } from './intake/punch-intake.js'
import { DeadLetters } from './spool/dead-letters.js'
import { Spool } from './spool/spool.js'
import type { AgentStatus } from './status/agent-status.js'
import { createMetrics } from './status/metrics.js'
import { StatusServer } from './status/status-server.js'
import { type DeviceStatus, StatusTracker } from './status/status-tracker.js'
import { Forwarder } from './uplink/forwarder.js'
import { createHttpClient } from './uplink/http-client.js'
import { PunchUplink } from './uplink/punch-uplink.js'
import { TokenClient } from './uplink/token-client.js'

/** A terminal whose attendance log is this full is close to losing records (or to refusing them). */
const LOG_USE_ALARM = 0.8
/** A read terminal's clock this far off the agent's puts punches on the wrong minute, or day. */
const SKEW_ALARM_SECONDS = 300
/** A change to a terminal's log stays an alarm this long after it was seen. */
const NOTICE_ALARM_MS = 24 * 3600_000

interface GatewayOptions {
  log: Logger
  /** Builds the device inputs (serial ports, MQTT); tests pass their own. */
  createInputs: (context: InputContext) => Component[]
}

/**
 * The composition root of hajri-agent (docs/development/architecture.md#data-flow-in-the-agent): inputs →
 * intake → spool → forwarder → cloud, with the status listener beside. Constructing does no I/O; start()
 * brings the parts up with the spool first (nothing is acknowledged before it can store) and the inputs last;
 * stop() takes them down in reverse, so no device is acknowledged after the spool has stopped.
 */
export class Gateway {
  readonly events: EventBus
  readonly spool: Spool
  readonly deadLetters: DeadLetters
  readonly tracker: StatusTracker
  private readonly forwarder: Forwarder
  private readonly statusServer: StatusServer
  private readonly inputs: Component[]
  private readonly reporters: DeviceReporter[]
  private readonly backfills: DeviceBackfill[]
  private readonly controls: DeviceControl[]
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
        transports: [
          ...(d.mqtt ? ['mqtt'] : []),
          ...(d.serial ? ['serial'] : []),
          ...(d.adms ? ['adms'] : []),
          ...(d.zk ? ['zk'] : []),
        ],
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
    this.reporters = this.inputs.filter(isDeviceReporter)
    this.backfills = this.inputs.filter(isDeviceBackfill)
    this.controls = this.inputs.filter(isDeviceControl)
    this.statusServer = new StatusServer({
      listen: config.status.listen,
      // Beside the spool, where `hajri-agent dead-letters replay` and `devices backfill` find it.
      tokenFile: controlTokenPath(config.spool.dir),
      log: log.child({ component: 'status' }),
      status: () => this.status(),
      metrics: createMetrics(this.events, () => ({
        spoolPunches: this.spool.stats().items,
        spoolBytes: this.spool.stats().bytes,
        deadLetters: this.deadLetters.count(),
        spoolFull: this.spool.full !== undefined,
        ...this.deviceSnapshot(),
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
      backfill: (deviceId, range) => this.backfill(deviceId, range.from, range.to),
      setTime: (deviceId) => this.setTime(deviceId),
      clearLog: (deviceId, options) => this.clearLog(deviceId, options),
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

  /**
   * Asks a terminal for its records from `from` to `to` again (IT staff's `devices backfill`):
   * RFC 3339, or local dates and times read in the device's zone. Resolves once the command is
   * durably queued; the terminal takes it at its next poll.
   */
  async backfill(deviceId: string, from: string, to: string): Promise<DeviceCommandStatus> {
    const device = this.config.devices.find((d) => d.id === deviceId)
    if (!device)
      throw new DeviceCommandError('device_not_found', `no device ${deviceId} in the configuration`)
    const input = this.backfills.find((b) => b.has(deviceId))
    if (!input) {
      throw new DeviceCommandError(
        'not_supported',
        `${deviceId} cannot be asked for its records again: only ADMS push terminals can`,
      )
    }
    const range = parseBackfillRange(from, to, device.timezone ?? this.config.site.timezone, nowMicros())
    return input.backfill(deviceId, range.from, range.to)
  }

  private deviceTimeZone(deviceId: string): string {
    return this.config.devices.find((d) => d.id === deviceId)?.timezone ?? this.config.site.timezone
  }

  private control(deviceId: string): DeviceControl {
    if (!this.config.devices.some((d) => d.id === deviceId))
      throw new DeviceCommandError('device_not_found', `no device ${deviceId} in the configuration`)
    const input = this.controls.find((c) => c.has(deviceId))
    if (!input) {
      throw new DeviceCommandError(
        'not_supported',
        `${deviceId} is not a terminal the agent reads: only zk devices take this command`,
      )
    }
    return input
  }

  /** Sets a ZK terminal's clock from the agent's (IT staff's `devices set-time`). */
  setTime(deviceId: string): Promise<DeviceClockResult> {
    return this.control(deviceId).setTime(deviceId)
  }

  /**
   * Clears a ZK terminal's attendance log (IT staff's `devices clear-log`), only when every punch
   * of it is in the cloud: none waits in the spool, and none is in dead letters, unless IT staff
   * accept that those stay in dead letters only (`acceptDeadLetters`).
   */
  clearLog(deviceId: string, options: { acceptDeadLetters?: boolean } = {}): Promise<{ cleared: number }> {
    return this.control(deviceId).clearLog(deviceId, (id) =>
      this.unsettledPunches(id, options.acceptDeadLetters === true),
    )
  }

  /** Why some punch of a device is not (yet) in the cloud, or undefined when all are. */
  private async unsettledPunches(deviceId: string, acceptDeadLetters: boolean): Promise<string | undefined> {
    let waiting = 0
    for (const ref of this.spool.pending()) {
      let punches: Awaited<ReturnType<Spool['read']>>
      try {
        punches = await this.spool.read(ref)
      } catch (err) {
        // Sent meanwhile: the forwarder removed the chunk once the cloud had taken it.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw err
      }
      for (const punch of punches) if (punch.deviceId === deviceId) waiting++
    }
    if (waiting > 0) {
      return `${waiting} of its punches are still waiting in the spool for the cloud: run the command again once they are sent (hajri-agent status shows the spool)`
    }
    if (acceptDeadLetters) return undefined
    const dead = await this.deadLetters.list({ limit: 1, select: (entry) => entry.deviceId === deviceId })
    if (dead.data.length > 0) {
      return (
        `it has records in dead letters, which are not in the cloud: see hajri-agent dead-letters list --device ${deviceId} and replay what can be; ` +
        'to clear the log all the same, those staying in dead letters only, add --accept-dead-letters'
      )
    }
    return undefined
  }

  private deviceReport(): DeviceReport {
    const report: DeviceReport = { devices: {}, unknownDevices: [] }
    for (const reporter of this.reporters) {
      const part = reporter.report()
      Object.assign(report.devices, part.devices)
      report.unknownDevices.push(...part.unknownDevices)
    }
    return report
  }

  private deviceSnapshot(): { devices: DeviceStatus[]; unknownDevices: number } {
    const report = this.deviceReport()
    return { devices: this.deviceStatuses(report), unknownDevices: report.unknownDevices.length }
  }

  private deviceStatuses(report: DeviceReport): DeviceStatus[] {
    return this.tracker.deviceStatuses().map((d) => {
      const details = report.devices[d.id]
      if (!details) return d
      // A terminal the agent reads says its clock itself, better than the estimate from punches.
      const measured = details.pull?.clockSkewSeconds
      return {
        ...d,
        details,
        ...(measured !== undefined && measured !== null && { clockSkewSeconds: measured }),
      }
    })
  }

  status(): AgentStatus {
    const now = Date.now()
    const spool = this.spool.stats()
    const forwarding = this.tracker.forwardingStatus()
    const report = this.deviceReport()
    const devices = this.deviceStatuses(report)
    const alarms: string[] = []
    if (this.spool.full)
      alarms.push(
        `spool full (${this.spool.full.message}): MQTT and ADMS punches are being refused and ZK terminals are not read (devices keep them)`,
      )
    if (spool.quarantined > 0)
      alarms.push(
        `${spool.quarantined} corrupt spool chunk(s) quarantined in ${join(this.config.spool.dir, 'quarantine')}`,
      )
    // A serial port that is gone is a device unheard, and so is a push terminal that stopped
    // polling. MQTT devices may connect only to publish, so their coming and going is shown, not raised.
    for (const d of devices) {
      const silentTerminal =
        (d.transports.includes('adms') || d.transports.includes('zk')) && d.state === 'disconnected'
      const missingPort =
        d.transports.includes('serial') && (d.state === 'disconnected' || d.state === 'waiting')
      if (silentTerminal || missingPort)
        alarms.push(`device ${d.id} ${d.state}${d.detail ? `: ${d.detail}` : ''}`)
      const use = d.details?.logUse
      if (use !== undefined && use !== null && use >= LOG_USE_ALARM) {
        const { attendanceRecords, attendanceCapacity } = d.details?.counts ?? {}
        alarms.push(
          `device ${d.id}: its attendance log is ${Math.floor(use * 100)}% full (${attendanceRecords} of ` +
            `${attendanceCapacity} records); a full terminal stops recording or overwrites its oldest records`,
        )
      }
    }
    for (const d of devices) {
      const pull = d.details?.pull
      if (!pull) continue
      if (pull.clockSkewSeconds !== null && Math.abs(pull.clockSkewSeconds) >= SKEW_ALARM_SECONDS) {
        alarms.push(
          `device ${d.id}: its clock is ${pull.clockSkewSeconds} s off the agent's in its time zone (${this.deviceTimeZone(d.id)}): ` +
            `if the zone is right, set the clock with hajri-agent devices set-time ${d.id}; if whole hours off, correct the device's timezone in the configuration`,
        )
      }
      for (const notice of pull.notices) {
        if (notice.kind !== 'log_cleared_by_command' && now - Date.parse(notice.at) < NOTICE_ALARM_MS)
          alarms.push(`device ${d.id} (${notice.at}): ${notice.message}`)
      }
    }
    for (const u of report.unknownDevices) {
      alarms.push(
        `unknown terminal ${u.serialNumber} at ${u.address} (last request ${u.lastSeenAt}) is refused: ` +
          'add a device with this adms.serialNumber to receive its punches',
      )
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
      unknownDevices: report.unknownDevices,
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
