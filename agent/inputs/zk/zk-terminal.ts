import { setTimeout as delay } from 'node:timers/promises'
import type { Logger } from 'pino'
import { parseDuration } from '../../../shared/duration.js'
import { formatInZone, parseLocalTimestamp } from '../../../shared/time.js'
import type { DeviceConfig, ZkDeviceConfig } from '../../config/schema.js'
import type { EventBus } from '../../events.js'
import type { PunchSink } from '../../intake/punch-sink.js'
import { SpoolFullError } from '../../spool/spool.js'
import { type DeviceClockResult, DeviceCommandError, type DeviceDetails } from '../device-report.js'
import { type SerialBackoff, serialBackoffDelay } from '../serial-backoff-delay.js'
import type { ZkClient, ZkClientOptions, ZkEvent } from './zk-client.js'
import type { ZkDeviceStore } from './zk-device-store.js'
import type { ZkFreeSizes } from './zk-free-sizes.js'
import {
  advanceZkCursor,
  compareZkLog,
  findClockStepBack,
  ZK_CLOCK_BACK_TOLERANCE_SECONDS,
} from './zk-log-cursor.js'
import { type LogEntry, realtimeEntry, ZkLogView } from './zk-log-entry.js'
import { ZkProtocolError } from './zk-protocol-error.js'
import { formatZkWallTime, type ZkWallTime } from './zk-time.js'

/** The session calls the terminal makes: ZkClient, or a test's stand-in. */
export type ZkSession = Pick<
  ZkClient,
  | 'readDeviceInfo'
  | 'readFreeSizes'
  | 'getTime'
  | 'setTime'
  | 'readAttendanceLog'
  | 'readUsers'
  | 'registerEvents'
  | 'disableDevice'
  | 'enableDevice'
  | 'clearAttendanceLog'
  | 'close'
  | 'isOpen'
  | 'transportKind'
>

export type ZkConnect = (options: ZkClientOptions) => Promise<ZkSession>

export interface ZkTerminalOptions {
  device: DeviceConfig & { zk: ZkDeviceConfig }
  siteTimeZone: string
  store: ZkDeviceStore
  sink: PunchSink
  events: EventBus
  log: Logger
  connect: ZkConnect
  /** ms since the epoch. */
  now?: () => number
  random?: () => number
  /** Reconnecting after a failure (default 1 s doubling to 5 min, jittered). */
  reconnectBackoff?: SerialBackoff
}

/** Lines handed to the sink at once: each hand-over is one fsync of the spool. */
const LINES_PER_FRAME = 2_000
/** Real-time punches remembered until the next read, which then does not hand them on again. */
const REMEMBERED_EVENTS = 10_000
/** Records at the end of a read whose real-time events may still be on their way. */
const IN_FLIGHT_EVENTS = 64
/** The log is read whole at least this often even when its count did not change. */
const FULL_READ_EVERY_MS = 3600_000
/** With setTime, a clock this far off is set. */
const SET_TIME_BEYOND_SECONDS = 60
const DEFAULT_BACKOFF: SerialBackoff = { initialMs: 1_000, maxMs: 5 * 60_000 }

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * One ZKTeco-family terminal read over port 4370 (docs/development/zk-protocol.md,
 * docs/decisions/0084-zk-terminals-are-read-with-a-cursor-of-their-own.md). It keeps one session
 * open, the only one the device allows, and through it:
 *
 * - every `pollEvery` asks how many records the log holds, and when that is not what it expects
 *   (or after a reconnect, or hourly) reads the log, in chunks, one request at a time, with the device paused
 *   (ZkClient re-enables it in a `finally`); only the records past the cursor are handed on
 *   (zk-log-cursor.ts), and the cursor moves, durably, only once they are stored;
 * - with `realtime`, hands on each punch as the device reports it, so that the next read does not
 *   hand it on again;
 * - reads the device's clock and says how far off it is.
 *
 * A timeout or a dropped connection ends the session; the terminal connects again after a jittered,
 * growing delay. It never writes users, and clears the log only in clearLog(), which IT staff ask
 * for and which first checks that every record is stored in the cloud.
 */
export class ZkTerminal {
  private readonly log: Logger
  private readonly now: () => number
  private readonly timeZone: string
  private readonly pollMs: number
  private session: ZkSession | undefined
  private stopping = new AbortController()
  private loop: Promise<void> | undefined
  /** Device work, one task at a time: polls, events, and the CLI's commands. */
  private chain: Promise<void> = Promise.resolve()
  private readonly delivered = new Set<string>()
  private wake: (() => void) | undefined
  private readSoon = true
  /** Real-time punches stored since the last read: the records the log has grown by, if none was missed. */
  private eventsSinceRead = 0
  /** Seconds the agent set the device's clock back by, since the last read: not a clock gone wrong. */
  private clockSetBackSeconds = 0
  private eventsRegistered = false
  /** The error last counted: a lost session reports it twice (the pending request, and onClose). */
  private lastFailure: unknown
  private recordBytes: number | undefined
  private users: ReadonlyMap<number, string> | undefined
  // What status shows.
  private state: 'connecting' | 'connected' | 'disconnected' = 'connecting'
  private sessionOpenedMs: number | null = null
  private lastContactMs: number | null = null
  private lastFullReadMs: number | null = null
  private freeSizes: ZkFreeSizes | undefined
  private skewSeconds: number | null = null
  private clockCheckedMs: number | null = null
  private connectionErrors = 0
  private lastError: { at: string; code: string; message: string } | null = null
  private recordsReceived = 0
  private reads = 0

  constructor(private readonly options: ZkTerminalOptions) {
    this.now = options.now ?? Date.now
    this.timeZone = options.device.timezone ?? options.siteTimeZone
    this.pollMs = (parseDuration(options.device.zk.pollEvery) ?? 300) * 1000
    this.log = options.log.child({ deviceId: options.device.id, zk: this.address })
  }

  get deviceId(): string {
    return this.options.device.id
  }

  private get address(): string {
    return `${this.options.device.zk.host}:${this.options.device.zk.port}`
  }

  start(): void {
    this.stopping = new AbortController()
    this.loop = this.run()
  }

  async stop(): Promise<void> {
    this.stopping.abort()
    this.wake?.()
    // The task in hand ends first: a read being stored is stored, and its cursor kept.
    await this.chain
    await this.session?.close().catch(() => undefined)
    await this.loop
  }

  /** Runs `task` once the device work before it has ended. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task, task)
    this.chain = run.then(
      () => undefined,
      () => undefined,
    )
    return run
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal
    let attempt = 0
    const backoff = () =>
      serialBackoffDelay(attempt++, this.options.reconnectBackoff ?? DEFAULT_BACKOFF, this.options.random)
    while (!signal.aborted) {
      try {
        await this.connect()
        while (!signal.aborted && this.session?.isOpen) {
          try {
            await this.exclusive(() => this.poll())
            attempt = 0
          } catch (error) {
            // A failure that ended the session opens a new one. One that left it open (a full
            // spool, a log that would not decode) keeps it, and the poll is tried again after the
            // same growing delay: each try reads the log with the device paused, so never in a loop.
            if (!this.session?.isOpen) throw error
            this.pollFailed(error)
            await this.idle(backoff())
            continue
          }
          await this.idle(this.pollMs)
        }
      } catch (error) {
        if (!signal.aborted) this.failed(error)
      }
      await this.session?.close().catch(() => undefined)
      this.session = undefined
      if (signal.aborted) break
      await this.idle(backoff())
    }
  }

  private pollFailed(error: unknown): void {
    const code =
      error instanceof ZkProtocolError ? error.code : error instanceof SpoolFullError ? 'spool_full' : 'error'
    const message = error instanceof Error ? error.message : String(error)
    this.lastError = { at: new Date(this.now()).toISOString(), code, message }
    this.readSoon = true
    // A full spool raises its own alarm; the terminal keeps its records meanwhile.
    if (error instanceof SpoolFullError) this.log.info({ code }, 'log not read: the spool is full')
    else this.log.warn({ code, err: error }, 'reading the ZK terminal failed; trying again later')
  }

  /** Waits `ms`, or less when stopped, the session ends, or a read is wanted sooner. */
  private async idle(ms: number): Promise<void> {
    const woken = new Promise<void>((resolve) => {
      this.wake = resolve
    })
    await Promise.race([delay(ms, undefined, { signal: this.stopping.signal }).catch(() => undefined), woken])
    this.wake = undefined
  }

  private async connect(): Promise<void> {
    const zk = this.options.device.zk
    this.state = 'connecting'
    const session = await this.options.connect({
      host: zk.host,
      port: zk.port,
      transport: zk.transport,
      commKey: zk.commKey,
      requestTimeoutMs: zk.timeoutSeconds * 1000,
      connectTimeoutMs: zk.timeoutSeconds * 1000,
      onEvent: (event) => this.onEvent(event),
      onClose: (error) => {
        if (error && !this.stopping.signal.aborted) this.failed(error)
        this.wake?.()
      },
    })
    this.session = session
    this.sessionOpenedMs = this.now()
    this.contact()
    const info = await session.readDeviceInfo()
    await this.options.store.setInfo(this.deviceId, info)
    this.eventsRegistered = false
    this.state = 'connected'
    this.readSoon = true
    this.options.events.emit('deviceState', {
      deviceId: this.deviceId,
      state: 'connected',
      detail: `${session.transportKind ?? zk.transport} ${this.address}`,
    })
    this.log.info(
      { transport: session.transportKind, serialNumber: info.serialNumber, firmware: info.firmware },
      'ZK terminal session open',
    )
  }

  private failed(error: unknown): void {
    if (error === this.lastFailure) return
    this.lastFailure = error
    const code = error instanceof ZkProtocolError ? error.code : 'error'
    const message = error instanceof Error ? error.message : String(error)
    this.connectionErrors++
    this.lastError = { at: new Date(this.now()).toISOString(), code, message }
    if (this.state !== 'disconnected') {
      this.log.warn({ code, err: error }, 'ZK terminal unreachable or session lost; connecting again')
      this.options.events.emit('deviceState', {
        deviceId: this.deviceId,
        state: 'disconnected',
        detail: message,
      })
    }
    this.state = 'disconnected'
  }

  private contact(): void {
    this.lastContactMs = this.now()
  }

  private requireSession(): ZkSession {
    const session = this.session
    if (!session?.isOpen || this.state !== 'connected') {
      throw new DeviceCommandError(
        'device_unreachable',
        `${this.deviceId} has no session open (${this.lastError?.message ?? 'connecting'}): try again when status shows it connected`,
      )
    }
    return session
  }

  /** One poll: the clock, the counts, and the log when it changed. */
  private async poll(): Promise<void> {
    const session = this.session
    if (!session?.isOpen) return
    await this.checkClock(session)
    this.freeSizes = await session.readFreeSizes()
    this.contact()
    const cursor = this.options.store.cursor(this.deviceId)
    const due = this.lastFullReadMs === null || this.now() - this.lastFullReadMs >= FULL_READ_EVERY_MS
    // Grown by exactly the punches reported in real time: those are stored, and the device is not
    // paused to read them again; the hourly read checks the log against the cursor.
    const expected = cursor.count + this.eventsSinceRead
    if (this.readSoon || due || this.freeSizes.records !== expected) await this.read(session)
    // After the first read: an 8-byte device's events name users by number, which its user table,
    // read with the log, maps to PINs.
    if (this.options.device.zk.realtime && !this.eventsRegistered) {
      await session.registerEvents()
      this.eventsRegistered = true
    }
  }

  private async checkClock(session: ZkSession): Promise<void> {
    const skew = await this.measureSkew(session)
    if (!this.options.device.zk.setTime || Math.abs(skew) <= SET_TIME_BEYOND_SECONDS) return
    await session.setTime(this.agentWallTime())
    const after = await this.measureSkew(session)
    this.clockSetBackSeconds += Math.max(0, skew - after)
    this.log.info({ skewSeconds: skew, after }, "the terminal's clock was set from the agent's (zk.setTime)")
  }

  private async measureSkew(session: ZkSession): Promise<number> {
    const time = await session.getTime()
    const now = this.now()
    const deviceMicros = parseLocalTimestamp(formatZkWallTime(time).replace('T', ' '), this.timeZone)
    this.contact()
    this.clockCheckedMs = now
    this.skewSeconds = deviceMicros === undefined ? null : Math.round((deviceMicros / 1000 - now) / 1000)
    return this.skewSeconds ?? 0
  }

  /** The agent's clock as a wall time in the device's zone. */
  private agentWallTime(): ZkWallTime {
    const text = formatInZone(this.now() * 1000, this.timeZone)
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(text)
    if (!m) throw new Error(`cannot read the time ${text}`)
    const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ]
    return { year, month, day, hour, minute, second }
  }

  /**
   * Reads the whole log and hands on what is past the cursor. Returns the record count read. The
   * cursor moves after each stored frame, so a spool that fills up, or a crash, costs at most a
   * frame read again.
   */
  private async read(session: ZkSession): Promise<number> {
    const result = await session.readAttendanceLog()
    this.contact()
    this.freeSizes = result.freeSizes
    this.recordBytes = result.log.recordBytes
    if (this.recordBytes === 8) this.users = await this.readUsers(session)
    const log = new ZkLogView(result.log, this.users)
    const store = this.options.store
    const cursor = store.cursor(this.deviceId)
    const { from, change } = compareZkLog(cursor, log)
    if (change.kind === 'cleared') {
      this.notice(
        'log_cleared',
        `the log no longer holds the ${change.previousCount} record(s) read before: it was cleared on the device (or the device was replaced); its ${log.length} record(s) are read from the start`,
      )
    } else if (change.kind === 'shifted' && change.dropped > 0) {
      this.notice(
        'log_shifted',
        `the device dropped its ${change.dropped} oldest record(s) (a full log overwrites them); none was unread`,
      )
    }
    const continued = change.kind === 'grown' || change.kind === 'shifted'
    let lastTime = continued ? cursor.lastTime : undefined
    const stepBack = findClockStepBack(
      (i) => log.time(i),
      from,
      log.length,
      lastTime,
      ZK_CLOCK_BACK_TOLERANCE_SECONDS + this.clockSetBackSeconds,
    )
    if (stepBack) {
      this.notice(
        'clock_back',
        `the device's clock went back from ${stepBack.from} to ${stepBack.to} between two records; both are kept`,
      )
    }
    let through = from
    try {
      while (through < log.length) {
        const frame: LogEntry[] = []
        for (let i = through; i < Math.min(log.length, through + LINES_PER_FRAME); i++)
          frame.push(log.entry(i))
        await this.handOn(frame)
        through += frame.length
        for (const entry of frame) if (entry.time !== undefined) lastTime = entry.time
        if (through < log.length)
          await store.setCursor(this.deviceId, advanceZkCursor(log, through, lastTime), false)
      }
    } catch (error) {
      // Nothing of this read stored: the cursor still learns the log's new shape, so that a clear
      // or a shift is not reported again by the next read.
      if (through === from) await store.setCursor(this.deviceId, advanceZkCursor(log, from, lastTime), false)
      throw error
    }
    await store.setCursor(this.deviceId, advanceZkCursor(log, through, lastTime), true)
    this.readSoon = false
    this.eventsSinceRead = 0
    if (through > from) this.clockSetBackSeconds = 0
    this.lastFullReadMs = this.now()
    this.reads++
    // Real-time punches in flight while the log was read are its newest records: they are not
    // handed on a second time when their events are taken.
    this.delivered.clear()
    for (let i = Math.max(0, log.length - IN_FLIGHT_EVENTS); i < log.length; i++)
      this.delivered.add(log.key(i))
    return log.length
  }

  private async readUsers(session: ZkSession): Promise<ReadonlyMap<number, string>> {
    const users = await session.readUsers()
    return new Map(users.map((u) => [u.uid, u.userId]))
  }

  /** Stores a frame's worth of entries: punches in the spool, what cannot be read in dead letters. */
  private async handOn(frame: readonly LogEntry[]): Promise<void> {
    const lines: string[] = []
    for (const entry of frame) {
      if (entry.line === undefined) {
        await this.options.sink.rejectFrame(this.deviceId, 'zk', Buffer.from(entry.raw), entry.problem)
        this.log.warn({ problem: entry.problem }, 'unreadable ZK record dead-lettered')
        this.options.events.emit('frameMalformed', { deviceId: this.deviceId, error: entry.problem })
      } else if (!this.delivered.has(entry.key)) lines.push(entry.line)
    }
    if (lines.length === 0) return
    await this.options.sink.accept(this.deviceId, 'zk', Buffer.from(lines.join('\n')))
    this.recordsReceived += lines.length
  }

  private onEvent(event: ZkEvent): void {
    this.contact()
    if (event.type === 'other') return
    if (event.type === 'malformed') {
      // The record is in the log too: the next read hands it on, or dead-letters it.
      this.log.warn(
        { error: event.error, data: event.data },
        'unreadable real-time event; the next read takes the record',
      )
      this.options.events.emit('frameMalformed', { deviceId: this.deviceId, error: event.error })
      this.readSoon = true
      return
    }
    const entry = realtimeEntry(event.attlog, this.recordBytes === 8 ? this.users : undefined)
    if (!entry?.line) {
      // An 8-byte device reports its internal user number, which only its user table maps.
      this.readSoon = true
      this.wake?.()
      return
    }
    const { key, line } = entry
    this.exclusive(async () => {
      if (this.delivered.has(key)) return
      try {
        await this.options.sink.accept(this.deviceId, 'zk', Buffer.from(line))
      } catch (error) {
        // Not stored: the record is still in the device's log, and the next read hands it on.
        if (!(error instanceof SpoolFullError)) this.log.error({ err: error }, 'real-time punch not stored')
        this.readSoon = true
        return
      }
      this.recordsReceived++
      this.eventsSinceRead++
      this.delivered.add(key)
      if (this.delivered.size > REMEMBERED_EVENTS) {
        const oldest = this.delivered.values().next().value
        if (oldest !== undefined) this.delivered.delete(oldest)
      }
    }).catch((error) => this.log.error({ err: error }, 'real-time punch failed'))
  }

  private notice(kind: Parameters<ZkDeviceStore['notice']>[1], message: string): void {
    this.log.warn({ kind }, message)
    this.options.store.notice(this.deviceId, kind, message)
  }

  /** `devices set-time`: the device's clock from the agent's, through the open session. */
  setTime(): Promise<DeviceClockResult> {
    return this.exclusive(async () => {
      const session = this.requireSession()
      const before = await this.measureSkew(session)
      await session.setTime(this.agentWallTime())
      const skew = await this.measureSkew(session)
      this.clockSetBackSeconds += Math.max(0, before - skew)
      const deviceTime = formatZkWallTime(await session.getTime())
      this.log.info(
        { before, after: skew },
        "the terminal's clock was set from the agent's (devices set-time)",
      )
      return { deviceTime, skewSeconds: skew }
    })
  }

  /**
   * `devices clear-log`: deletes the device's attendance log, only once every record on it is
   * stored in the cloud. The log is read (its new records handed on as usual), `unsettled` says
   * whether any punch of this device is still short of the cloud (in the spool or in dead
   * letters), and the log is cleared only if the device, paused, still holds exactly the records
   * read. Anything else refuses, and nothing on the device changes.
   */
  clearLog(unsettled: (deviceId: string) => Promise<string | undefined>): Promise<{ cleared: number }> {
    return this.exclusive(async () => {
      const session = this.requireSession()
      const count = await this.read(session)
      const reason = await unsettled(this.deviceId)
      if (reason !== undefined) throw new DeviceCommandError('not_safe', `${this.deviceId}: ${reason}`)
      await session.disableDevice()
      try {
        const sizes = await session.readFreeSizes()
        if (sizes.records !== count) {
          throw new DeviceCommandError(
            'not_safe',
            `${this.deviceId} recorded new punches while it was checked: run the command again`,
          )
        }
        await session.clearAttendanceLog()
        this.freeSizes = await session.readFreeSizes()
      } finally {
        if (session.isOpen) await session.enableDevice()
      }
      await this.options.store.setCursor(this.deviceId, { count: 0, tail: [] }, true)
      this.notice('log_cleared_by_command', `the log's ${count} record(s) were cleared by devices clear-log`)
      return { cleared: count }
    })
  }

  report(): DeviceDetails {
    const info = this.options.store.info(this.deviceId)
    const sizes = this.freeSizes
    const zk = this.options.device.zk
    return {
      protocol: 'zk',
      serialNumber: info.serialNumber ?? '',
      address: this.address,
      protocolVersion: this.session?.transportKind ? `zk ${this.session.transportKind}` : null,
      model: info.platform ?? null,
      firmware: info.firmware ?? null,
      lastContactAt: iso(this.lastContactMs),
      lastHandshakeAt: iso(this.sessionOpenedMs),
      lastUploadAt: this.options.store.lastReadAt(this.deviceId) ?? null,
      recordsReceived: this.recordsReceived,
      uploads: this.reads,
      counts: {
        users: sizes?.users ?? null,
        fingerprints: sizes?.fingers ?? null,
        faces: sizes?.faces ?? null,
        attendanceRecords: sizes?.records ?? null,
        userCapacity: sizes?.userCapacity ?? null,
        fingerprintCapacity: sizes?.fingerCapacity ?? null,
        faceCapacity: sizes?.faceCapacity ?? null,
        attendanceCapacity: sizes?.recordCapacity ?? null,
      },
      logUse: sizes && sizes.recordCapacity > 0 ? sizes.records / sizes.recordCapacity : null,
      commands: [],
      pull: {
        transport: zk.transport,
        pollEverySeconds: this.pollMs / 1000,
        realtime: zk.realtime,
        recordsRead: this.options.store.cursor(this.deviceId).count,
        lastReadAt: this.options.store.lastReadAt(this.deviceId) ?? null,
        clockSkewSeconds: this.skewSeconds,
        clockCheckedAt: iso(this.clockCheckedMs),
        connectionErrors: this.connectionErrors,
        lastError: this.lastError,
        notices: [...this.options.store.notices(this.deviceId)],
      },
    }
  }
}
