import { AdmsAttendanceLog } from './adms-attendance-log.js'
import {
  type AdmsLogRecord,
  ATTLOG_FIELD_COUNTS,
  type AttlogFieldCount,
  type AttlogFields,
  formatAttlogLine,
  parseAttlogLine,
} from './adms-attlog.js'
import { type AdmsCommand, type AdmsCommandHost, parseAdmsCommands, runAdmsCommand } from './adms-commands.js'
import {
  type AdmsDeviceInfo,
  admsInfoLines,
  admsInfoParameter,
  defaultAdmsDeviceInfo,
} from './adms-device-info.js'
import {
  type AdmsDeviceOptions,
  type AdmsDeviceStats,
  type AdmsPunch,
  emptyAdmsDeviceStats,
} from './adms-device-options.js'
import { AdmsHandshakeError, AdmsRecordNotAcknowledgedError } from './adms-errors.js'
import { AdmsHttpClient, acknowledgementProblem, replyProblem } from './adms-http.js'
import { AdmsSchedule, type AdmsTiming } from './adms-schedule.js'
import { type AdmsServerOptions, admsTiming, parseAdmsServerOptions } from './adms-server-options.js'
import { AdmsWallClock } from './adms-wall-clock.js'

/**
 * A ZKTeco/eSSL terminal's Attendance PUSH 2.x firmware (2.2–2.4), the device side of ADMS / iclock:
 * it handshakes (`GET /iclock/cdata?options=all`), uploads its attendance log (`POST
 * /iclock/cdata?table=ATTLOG`) from the server's ATTLOGStamp on, polls for commands (`GET
 * /iclock/getrequest`) every Delay seconds, runs them and posts their results (`POST
 * /iclock/devicecmd`). One request at a time, each on a connection of its own, as firmware does.
 *
 * A record leaves the device only when the server acknowledges it with `OK: n`, n the number of
 * records posted; anything else is a failure, after which the same batch is posted again, after
 * ErrorDelay, for as long as it takes. The constructor does no I/O.
 */
export class AdmsDevice {
  readonly stats: AdmsDeviceStats = emptyAdmsDeviceStats()
  /** Every command the server sent, in order. */
  readonly commandsReceived: AdmsCommand[] = []
  /** The last handshake reply, as the device understood it. */
  serverOptions: AdmsServerOptions | undefined
  readonly info: AdmsDeviceInfo
  readonly serialNumber: string

  private readonly attendance: AdmsAttendanceLog
  private readonly clock: AdmsWallClock
  private readonly http: AdmsHttpClient
  private readonly schedule: AdmsSchedule
  private readonly hostNow: () => number
  private readonly batchSize: number
  private readonly fields: AttlogFieldCount
  private readonly lineEnding: string
  private readonly timeScale: number
  private readonly pushVersion: string
  private readonly notice: (message: string) => void
  /** Waiting for the next successful handshake (start, reboot). */
  private readonly sessionWaiters: { resolve: () => void; reject: (err: Error) => void }[] = []
  /** The current session's number; 0: none, a handshake comes first. */
  private session = 0
  private sessions = 0
  /** Counts reboots, so a handshake cut short by one is not taken for a failure. */
  private boots = 0
  private running: Promise<void> | undefined
  private stopped = false
  private forgetNextStamp = false
  /** The batch posted and not acknowledged: what is posted again, unchanged. */
  private unacknowledged: AdmsLogRecord[] | undefined
  /** The failure of the outage under way, for one notice per outage. */
  private outage: string | undefined

  constructor(options: AdmsDeviceOptions) {
    this.serialNumber = options.serialNumber
    this.http = new AdmsHttpClient({
      url: options.url,
      serialNumber: options.serialNumber,
      contentType: options.contentType === undefined ? 'text/plain' : options.contentType,
      timeoutMs: options.requestTimeoutMs ?? 20_000,
    })
    const fields = options.fields ?? 7
    if (!ATTLOG_FIELD_COUNTS.includes(fields)) throw new TypeError('fields must be 5, 7, 9 or 12')
    this.fields = fields
    this.batchSize = Math.max(1, Math.floor(options.batchSize ?? 100))
    this.lineEnding = options.lineEnding ?? '\n'
    this.timeScale = options.timeScale ?? 1
    if (!(this.timeScale > 0)) throw new TypeError('timeScale must be above 0')
    this.pushVersion = options.pushVersion ?? '2.4.1'
    this.notice = options.log ?? (() => {})
    this.hostNow = options.now ?? Date.now
    this.clock = new AdmsWallClock(options.initialTimeZoneMinutes ?? 0, this.hostNow)
    this.info = {
      ...defaultAdmsDeviceInfo(options.serialNumber),
      ...options.info,
      ...(options.firmware !== undefined ? { firmware: options.firmware } : {}),
      ...(options.model !== undefined ? { model: options.model } : {}),
    }
    this.attendance = new AdmsAttendanceLog(
      options.firstStamp ?? Math.floor(this.hostNow()),
      this.info.attLogCapacity,
    )
    this.schedule = new AdmsSchedule(() => this.timing())
  }

  /** The attendance log, oldest first. */
  get log(): readonly AdmsLogRecord[] {
    return this.attendance.records
  }

  /** The stamp of the last record the server has: its ATTLOGStamp, then each acknowledged batch's. */
  get cursor(): number {
    return this.attendance.cursor
  }

  /** Device time minus host time, ms, from the last handshake's Date header. */
  get clockOffsetMs(): number {
    return this.clock.offsetMs
  }

  /** Minutes east of UTC, from the last handshake's TimeZone. */
  get timeZoneMinutes(): number {
    return this.clock.zoneMinutes
  }

  /** The wall time the device shows now (or at host time `at`). */
  wallTime(at?: number): string {
    return this.clock.wallTime(at)
  }

  /**
   * Boots: resolves after the first successful handshake, then uploads and polls in the background
   * until stop(). A failed handshake is tried again after ErrorDelay, as firmware does; with
   * `failFast`, the first failure rejects with an AdmsHandshakeError and the device stops.
   */
  start(options: { failFast?: boolean } = {}): Promise<void> {
    if (this.running || this.stopped) return Promise.reject(new Error('an AdmsDevice starts once'))
    const first = this.nextSession()
    this.running = this.run(options.failFast === true)
    return first
  }

  /** Makes a record now (or at `at`); resolves once the server has acknowledged it. */
  punch(punch: AdmsPunch): Promise<void> {
    if (!punch.pin || /[\t\r\n]/.test(punch.pin))
      throw new TypeError('a PIN is text without TAB or line breaks')
    for (const value of [punch.status, punch.verify ?? 0, punch.workcode ?? 0])
      if (!Number.isInteger(value) || value < 0) throw new TypeError(`${value} is no ATTLOG field value`)
    return this.append({
      pin: punch.pin,
      time: this.clock.wallTime(punch.at),
      status: punch.status,
      verify: punch.verify ?? 1,
      workcode: punch.workcode ?? 0,
    })
  }

  /** Adds a ready-made ATTLOG line (PIN, TAB, wall time, status...); resolves once acknowledged. */
  addLine(line: string): Promise<void> {
    return this.append(parseAttlogLine(line))
  }

  /** Resolves once every record made so far is acknowledged. */
  flush(): Promise<void> {
    return this.attendance.flush()
  }

  /**
   * Restarts: what the connection knew is lost (the batch in flight, the cursor), the log is kept.
   * Resolves after the next successful handshake, whose ATTLOGStamp sets the cursor again.
   */
  reboot(): Promise<void> {
    if (!this.running || this.stopped) return Promise.reject(new Error('the device is not running'))
    const next = this.nextSession()
    this.notice('rebooting')
    this.endSession()
    this.boots++
    this.schedule.interrupt()
    this.http.interrupt()
    return next
  }

  /** The next handshake ignores the server's ATTLOGStamp: the whole log is uploaded again. */
  forgetStamps(): void {
    this.forgetNextStamp = true
  }

  /** Stops: no timer or connection is left; records not acknowledged reject. */
  async stop(): Promise<void> {
    this.stopped = true
    this.schedule.interrupt()
    this.http.close()
    await this.running
    this.abandon()
  }

  private append(fields: AttlogFields): Promise<void> {
    if (this.stopped) return Promise.reject(new AdmsRecordNotAcknowledgedError('the device is stopped'))
    const acknowledged = this.attendance.append(
      fields,
      formatAttlogLine(fields, this.fields, this.clock.zoneMinutes),
    )
    this.schedule.wake()
    return acknowledged
  }

  private nextSession(): Promise<void> {
    return new Promise<void>((resolve, reject) => this.sessionWaiters.push({ resolve, reject }))
  }

  private abandon(): void {
    for (const waiter of this.sessionWaiters.splice(0))
      waiter.reject(new Error('the device was stopped before a handshake'))
    this.attendance.abandon('the device was stopped before the record was acknowledged')
  }

  /** The firmware's main loop: one step at a time, each request on its own connection. */
  private async run(failFast: boolean): Promise<void> {
    try {
      while (!this.stopped) {
        if (this.session === 0) {
          const boot = this.boots
          const failure = await this.handshake()
          if (this.stopped || failure === undefined || boot !== this.boots) continue
          const giveUp = failFast && this.stats.handshakes === 0
          // No "trying again" notice when start() rejects instead: the caller says what happened.
          this.failed(failure.message, !giveUp)
          if (giveUp) {
            this.stopped = true
            for (const waiter of this.sessionWaiters.splice(0)) waiter.reject(failure)
            break
          }
          await this.schedule.nap(this.timing().errorDelayMs, false)
          continue
        }
        const step = this.schedule.next(this.attendance.hasPending())
        if (step === 'poll') await this.poll()
        else if (step === 'upload') await this.upload()
        else await this.schedule.nap(step, true)
      }
    } finally {
      this.abandon()
    }
  }

  // The handshake: options, clock, zone and cursor.

  private async handshake(): Promise<AdmsHandshakeError | undefined> {
    const params = { options: 'all', pushver: this.pushVersion, language: '69' }
    const exchange = await this.http.exchange('GET', 'cdata', params)
    const receivedAt = this.hostNow()
    if (!exchange) return undefined
    if ('problem' in exchange)
      return new AdmsHandshakeError(this.serialNumber, undefined, '', exchange.problem)
    const { reply } = exchange
    if (reply.status !== 200)
      return new AdmsHandshakeError(this.serialNumber, reply.status, reply.body, undefined)
    const options = parseAdmsServerOptions(reply.body)
    if (!this.clock.setFromDate(reply.date, receivedAt))
      this.notice(
        `the handshake reply has no Date the device can read (${reply.date}); its clock is unchanged`,
      )
    if (options.timeZoneMinutes !== undefined) this.clock.zoneMinutes = options.timeZoneMinutes
    else if (options.raw.TimeZone !== undefined)
      this.notice(
        `TimeZone=${options.raw.TimeZone} is no zone; the device keeps ${this.clock.zoneMinutes} minutes east of UTC`,
      )
    this.serverOptions = options
    this.attendance.resumeFrom(this.forgetNextStamp ? 0 : options.attLogStamp)
    this.forgetNextStamp = false
    this.session = ++this.sessions
    this.unacknowledged = undefined
    this.schedule.reset()
    this.stats.handshakes++
    this.recovered()
    for (const waiter of this.sessionWaiters.splice(0)) waiter.resolve()
    return undefined
  }

  private endSession(): void {
    this.session = 0
    this.unacknowledged = undefined
  }

  // Uploads (table=ATTLOG): batches from the cursor on, each posted until acknowledged.

  private async upload(): Promise<void> {
    const session = this.session
    const resend = this.unacknowledged !== undefined
    const batch = this.unacknowledged ?? this.attendance.nextBatch(this.batchSize)
    this.unacknowledged = batch
    const acknowledged = await this.postAttlog(batch, resend)
    // Acknowledged is acknowledged, even if a reboot came meanwhile: the server has them.
    if (acknowledged) this.stats.recordsAcknowledged += this.attendance.acknowledged(batch)
    if (this.session !== session) return
    if (acknowledged === false) this.schedule.uploadFailed()
    if (!acknowledged) return
    this.unacknowledged = undefined
    // Push 2.4: a heartbeat between the batches of a long upload.
    if (this.attendance.hasPending() && this.pushAtLeast(2, 4)) await this.ping(session)
  }

  /** Posts one batch: true once acknowledged, false on a failure, undefined when cut short. */
  private async postAttlog(batch: readonly AdmsLogRecord[], resend: boolean): Promise<boolean | undefined> {
    const stamp = (batch.at(-1) as AdmsLogRecord).stamp
    const body = batch.map((r) => `${r.line}${this.lineEnding}`).join('')
    this.stats.batchesPosted++
    if (resend) this.stats.batchesResent++
    const exchange = await this.http.exchange(
      'POST',
      'cdata',
      { table: 'ATTLOG', Stamp: String(stamp) },
      body,
    )
    if (!exchange) return undefined
    const problem =
      'problem' in exchange ? exchange.problem : acknowledgementProblem(exchange.reply, batch.length)
    if (problem === undefined) {
      this.recovered()
      return true
    }
    this.failed(`the upload of ${batch.length} record(s) up to Stamp=${stamp} failed: ${problem}`)
    return false
  }

  private async ping(session: number): Promise<void> {
    this.stats.pings++
    const exchange = await this.http.exchange('GET', 'ping', {})
    if (!exchange || this.session !== session) return
    const problem = replyProblem(exchange)
    if (problem === undefined) return
    this.failed(`the ping failed: ${problem}`)
    this.schedule.uploadFailed()
  }

  // Commands: getrequest, then devicecmd with the results.

  private async poll(): Promise<void> {
    const session = this.session
    this.stats.polls++
    const info = admsInfoParameter(this.info, this.attendance.records.length)
    const exchange = await this.http.exchange('GET', 'getrequest', { INFO: info })
    if (!exchange || this.session !== session) return
    const problem = replyProblem(exchange)
    if (problem !== undefined || !('reply' in exchange)) {
      this.failed(`the command poll failed: ${problem}`)
      this.schedule.polled(false)
      return
    }
    this.recovered()
    const { commands, ignored } = parseAdmsCommands(exchange.reply.body)
    for (const line of ignored) this.notice(`not a command: ${JSON.stringify(line.slice(0, 120))}`)
    const results: string[] = []
    let reboot = false
    for (const command of commands) {
      this.commandsReceived.push(command)
      const outcome = await runAdmsCommand(command, this.commandHost)
      // A reboot or stop during a DATA QUERY upload: the results are lost with the session.
      if (this.session !== session || this.stopped) return
      results.push(...outcome.lines)
      reboot ||= outcome.reboot
    }
    if (results.length > 0) await this.postResults(results, session)
    this.schedule.polled(true)
    if (reboot && this.session === session) {
      this.notice('rebooting (REBOOT command)')
      this.endSession()
    }
  }

  /** All results of one poll in one POST, posted again after ErrorDelay until HTTP 200. */
  private async postResults(lines: string[], session: number): Promise<void> {
    const body = lines.map((line) => `${line}${this.lineEnding}`).join('')
    while (!this.stopped && this.session === session) {
      const exchange = await this.http.exchange('POST', 'devicecmd', {}, body)
      if (!exchange || this.session !== session) return
      const problem = replyProblem(exchange)
      if (problem === undefined) {
        this.stats.commandResultsPosted++
        this.recovered()
        return
      }
      this.failed(`posting command results failed: ${problem}`)
      await this.schedule.nap(this.timing().errorDelayMs, false)
    }
  }

  private readonly commandHost: AdmsCommandHost = {
    records: () => this.attendance.records,
    infoLines: () => admsInfoLines(this.info, this.attendance.records.length),
    uploadPendingNow: () => this.schedule.requestUpload(),
    clearLog: () => {
      this.unacknowledged = undefined
      this.attendance.clear()
    },
    uploadQueried: async (records) => {
      // DATA QUERY: ordinary ATTLOG batches, each posted until acknowledged; the cursor stays.
      const session = this.session
      for (let k = 0; k < records.length; k += this.batchSize) {
        const batch = records.slice(k, k + this.batchSize)
        for (let resend = false; ; resend = true) {
          const acknowledged = await this.postAttlog(batch, resend)
          if (acknowledged) break
          if (acknowledged === undefined || this.stopped || this.session !== session) return false
          await this.schedule.nap(this.timing().errorDelayMs, false)
        }
      }
      return true
    },
  }

  // Notices and delays.

  /** Counts a failure; the first of an outage is a notice (unless `notify` is false). */
  private failed(problem: string, notify = true): void {
    this.stats.failures++
    this.stats.lastFailure = problem
    if (this.outage === undefined && notify)
      this.notice(`${problem}; trying again every ${this.timing().errorDelayMs / this.timeScale / 1000} s`)
    this.outage = problem
  }

  private recovered(): void {
    if (this.outage === undefined) return
    this.outage = undefined
    this.notice(`${this.http.base.origin} answers again`)
  }

  private timing(): AdmsTiming {
    return admsTiming(this.serverOptions, this.timeScale)
  }

  private pushAtLeast(major: number, minor: number): boolean {
    const [a = 0, b = 0] = this.pushVersion.split('.').map(Number)
    return a > major || (a === major && b >= minor)
  }
}
