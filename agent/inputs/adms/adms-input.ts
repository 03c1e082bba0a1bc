import type { IncomingMessage } from 'node:http'
import { join } from 'node:path'
import type { Logger } from 'pino'
import { formatInZone } from '../../../shared/time.js'
import { addressMatcher } from '../../config/address-range.js'
import type { AdmsConfig, DeviceConfig } from '../../config/schema.js'
import type { AgentEvents, EventBus } from '../../events.js'
import type { PunchSink } from '../../intake/punch-sink.js'
import { SpoolFullError } from '../../spool/spool.js'
import {
  type DeviceBackfill,
  DeviceCommandError,
  type DeviceCommandStatus,
  type DeviceDetails,
  type DeviceReport,
  type DeviceReporter,
} from '../device-report.js'
import { parseCommandResults, parseOptionPairs, pollReply } from './adms-commands.js'
import { AdmsDeviceStore } from './adms-device-store.js'
import { AdmsListener, type AdmsResponse, BodyTooLargeError } from './adms-listener.js'
import { handshakeReply } from './adms-options.js'
import {
  type AdmsRoute,
  type AdmsTarget,
  countLines,
  displayAddress,
  parseAdmsTarget,
  routeOf,
  stampOf,
} from './adms-request.js'
import { type AdmsTerminal, commandStatus, createTerminals, terminalDetails } from './adms-terminal.js'
import { parseInfoDetails, parseInfoParameter } from './terminal-info.js'
import { TerminalPresence } from './terminal-presence.js'
import { UnknownTerminals } from './unknown-terminals.js'

type AdmsOutcome = AgentEvents['admsRequest']['outcome']

export interface AdmsInputOptions {
  config: AdmsConfig
  /** All devices; those with `adms.serialNumber` are served. */
  devices: readonly DeviceConfig[]
  siteTimeZone: string
  /** The spool's directory: the terminals' cursors and commands are kept beside it. */
  spoolDir: string
  sink: PunchSink
  events: EventBus
  log: Logger
  /** ms since the epoch. */
  now?: () => number
  /** How often silent terminals are looked for (5 s; tests use less). */
  watchEveryMs?: number
}

/** Records one upload may carry: far above a terminal's batch, far below what would hurt. */
const MAX_UPLOAD_LINES = 20_000
/** Commands handed over per poll. */
const COMMANDS_PER_POLL = 8
/** A terminal is asked for its counts (INFO) at most this often. */
const INFO_EVERY_MS = 3600_000
const WATCH_EVERY_MS = 5_000
/** A refused peer or stranger is logged once per this long. */
const LOG_EVERY_MS = 3600_000

function text(status: number, body: string, headers?: Record<string, string>): AdmsResponse {
  return headers ? { status, body, headers } : { status, body }
}

/**
 * The agent as the server ZKTeco/eSSL terminals push to (Attendance PUSH 2.x, the `/iclock/`
 * protocol, which the terminals' menus call ADMS or Cloud Server). For each configured terminal:
 *
 * - the handshake tells it how to upload, when to poll, its time zone and where to resume (its
 *   ATTLOGStamp, kept across restarts in AdmsDeviceStore); the reply's `Date` header sets its clock;
 * - an upload of attendance records is answered `OK: <n>` only once every record is durable, in the
 *   spool or in dead letters (the sink resolves then); anything else (a full spool, a failed disk)
 *   is answered 503, so the terminal keeps the records and sends them again after ErrorDelay. A
 *   bare `OK` would not do: firmware takes it for a failure and resends the batch forever;
 * - polls are answered with the commands queued for it (reads only: see adms-commands.ts), and
 *   their results recorded.
 *
 * A serial number no device has is refused (403, so the terminal keeps its records), logged once an
 * hour and listed in status; nothing it sends is read. Records sent again (a reboot, a reset cursor,
 * a backfill) are harmless: each punch's id is its identity (see punch-id.ts).
 */
export class AdmsInput implements DeviceReporter, DeviceBackfill {
  private readonly terminals = new Map<string, AdmsTerminal>()
  private readonly byDevice = new Map<string, AdmsTerminal>()
  private readonly presence: TerminalPresence
  private readonly unknown: UnknownTerminals
  private readonly store: AdmsDeviceStore
  private readonly listener: AdmsListener
  private readonly log: Logger
  private readonly now: () => number
  private readonly refusedLogged = new Map<string, number>()

  constructor(private readonly options: AdmsInputOptions) {
    this.now = options.now ?? Date.now
    this.log = options.log.child({ component: 'adms' })
    this.unknown = new UnknownTerminals(this.now)
    this.store = new AdmsDeviceStore(
      join(options.spoolDir, 'devices', 'adms.json'),
      this.log.child({ component: 'adms-state' }),
      this.now,
    )
    const { config } = options
    const terminals = createTerminals(options.devices, options.siteTimeZone, this.log)
    for (const terminal of terminals) {
      this.terminals.set(terminal.serialNumber, terminal)
      this.byDevice.set(terminal.deviceId, terminal)
    }
    this.presence = new TerminalPresence(terminals, {
      events: options.events,
      now: this.now,
      // Silent for three polls (or three error delays) in a row: the terminal is gone.
      offlineAfterMs: Math.max(60, 3 * Math.max(config.pollSeconds, config.errorDelaySeconds)) * 1000,
      watchEveryMs: options.watchEveryMs ?? WATCH_EVERY_MS,
    })
    const allowed = config.allowFrom ? addressMatcher(config.allowFrom) : () => true
    this.listener = new AdmsListener({
      listen: config.listen,
      maxConnections: config.maxConnections,
      maxBodyBytes: config.maxBodyBytes,
      allows: allowed,
      handle: (request, body) => this.handle(request, body),
      onRefused: (reason, address) => this.refused(reason, address),
      log: this.log,
    })
  }

  /** Where the listener listens (with port 0, the port the system chose). */
  address() {
    return this.listener.address()
  }

  async start(): Promise<void> {
    await this.store.open()
    await this.listener.start()
    const address = this.listener.address()
    this.log.info(
      {
        address: address && `${address.address}:${address.port}`,
        terminals: this.terminals.size,
        allowFrom: this.options.config.allowFrom ?? 'any address',
      },
      'ADMS listener ready for push terminals',
    )
    this.presence.start()
  }

  async stop(): Promise<void> {
    this.presence.stop()
    await this.listener.stop()
    await this.store.close()
  }

  has(deviceId: string): boolean {
    return this.byDevice.has(deviceId)
  }

  async backfill(deviceId: string, from: number, to: number): Promise<DeviceCommandStatus> {
    const terminal = this.byDevice.get(deviceId)
    if (!terminal) throw new DeviceCommandError('device_not_found', `${deviceId} is not a push terminal`)
    if (!(from <= to)) throw new DeviceCommandError('invalid_range', 'the start is after the end')
    // Wall times in the terminal's zone, which is how it reads StartTime and EndTime.
    const wall = (micros: number) => formatInZone(micros, terminal.timeZone).slice(0, 19).replace('T', ' ')
    const command = await this.store.queue(terminal.serialNumber, {
      kind: 'backfill',
      from: wall(from),
      to: wall(to),
    })
    terminal.log.info({ commandId: command.id, command: command.text }, 'backfill queued for the next poll')
    return commandStatus(command)
  }

  report(): DeviceReport {
    const devices: Record<string, DeviceDetails> = {}
    for (const t of this.terminals.values()) devices[t.deviceId] = terminalDetails(t, this.store)
    return { devices, unknownDevices: this.unknown.list() }
  }

  private async handle(request: IncomingMessage, body: () => Promise<Buffer>): Promise<AdmsResponse> {
    const target = parseAdmsTarget(request.url ?? '')
    const address = displayAddress(request.socket.remoteAddress)
    if (!target) return this.answer('other', 'not_found', text(404, 'not found'))
    const route = routeOf(target.page, request.method ?? '')
    if (target.page === 'registry' || target.page === 'push') {
      // Security PUSH 3.x (access-control firmware) starts with /iclock/registry.
      if (this.logOnce(`push3|${target.serialNumber ?? address}`)) {
        this.log.warn(
          { serialNumber: target.serialNumber, address },
          'a terminal speaks Security PUSH 3.x (access control), which the agent does not: set it to attendance push (ADMS)',
        )
      }
      return this.answer(route, 'not_found', text(404, 'Security PUSH 3.x is not supported'))
    }
    if (target.serialNumber === undefined) {
      return this.answer(route, 'bad_request', text(400, 'SN is missing or not a serial number'))
    }
    const terminal = this.terminals.get(target.serialNumber)
    if (!terminal) {
      if (this.unknown.seen(target.serialNumber, address)) {
        this.log.warn(
          { serialNumber: target.serialNumber, address },
          'unknown ADMS terminal refused: add a device with this adms.serialNumber to receive its punches (it keeps them meanwhile)',
        )
      }
      return this.answer(route, 'unknown_device', text(403, 'unknown device'))
    }
    if (terminal.allows && !terminal.allows(address)) {
      if (this.logOnce(`device|${terminal.deviceId}|${address}`)) {
        terminal.log.warn(
          { address },
          "a request with this terminal's serial number from an address it may not use",
        )
      }
      return this.answer(route, 'refused', text(403, 'not from this address'))
    }
    this.presence.touch(terminal, address)
    try {
      switch (route) {
        case 'handshake':
          return this.answer(route, 'ok', await this.handshake(terminal, target))
        case 'upload':
          return await this.upload(terminal, target, await body())
        case 'poll':
          return this.answer(route, 'ok', this.poll(terminal, target))
        case 'result':
          return this.answer(route, 'ok', this.results(terminal, await body()))
        case 'ping':
          return this.answer(route, 'ok', text(200, 'OK'))
        default:
          return this.answer(route, 'bad_request', text(405, 'method not allowed'))
      }
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        terminal.log.warn(
          { route, limit: this.options.config.maxBodyBytes },
          'request refused: body too large',
        )
        return this.answer(route, 'too_large', text(413, err.message))
      }
      throw err
    }
  }

  private answer(route: AdmsRoute, outcome: AdmsOutcome, response: AdmsResponse): AdmsResponse {
    this.options.events.emit('admsRequest', { route, outcome })
    return response
  }

  private async handshake(terminal: AdmsTerminal, target: AdmsTarget): Promise<AdmsResponse> {
    const { config } = this.options
    const now = this.now()
    terminal.lastHandshakeMs = now
    const pushVersion = target.query.get('pushver')
    if (pushVersion && /^[\d.]{1,16}$/.test(pushVersion)) terminal.protocolVersion = `push ${pushVersion}`
    // A terminal that handshakes (options=all) has restarted or reconnected: what it was handed and
    // never answered is handed again. Some firmware also GETs cdata without options as a heartbeat,
    // which says nothing of that. Its counts are asked for at most once an hour.
    if (target.query.has('options')) this.store.requeueUnanswered(terminal.serialNumber)
    if (!this.store.hasRecent(terminal.serialNumber, 'info', INFO_EVERY_MS)) {
      await this.store.queue(terminal.serialNumber, { kind: 'info' })
    }
    const stamp = this.store.attlogStamp(terminal.serialNumber)
    terminal.log.info({ address: terminal.address, pushVersion, stamp }, 'terminal handshake')
    return text(
      200,
      handshakeReply({
        serialNumber: terminal.serialNumber,
        attlogStamp: stamp,
        pollSeconds: config.pollSeconds,
        errorDelaySeconds: config.errorDelaySeconds,
        realtime: config.realtime,
        timeZone: terminal.timeZone,
        now,
      }),
    )
  }

  private async upload(terminal: AdmsTerminal, target: AdmsTarget, data: Buffer): Promise<AdmsResponse> {
    const table = (target.query.get('table') ?? '').toUpperCase()
    const lines = countLines(data, MAX_UPLOAD_LINES)
    if (lines > MAX_UPLOAD_LINES) {
      terminal.log.warn({ table, lines }, 'upload refused: too many records in one request')
      return this.answer(
        'upload',
        'too_large',
        text(413, `more than ${MAX_UPLOAD_LINES} records in one request`),
      )
    }
    if (table === 'ATTLOG') return this.attendance(terminal, target, data, lines)
    if (table === 'OPTIONS')
      this.store.mergeInfo(terminal.serialNumber, parseInfoDetails(parseOptionPairs(data.toString('utf8'))))
    // Operation logs (user, fingerprint and face enrolments), photos and the rest are acknowledged
    // and not kept: the agent asks for attendance only, and a refusal would have them sent forever.
    // OPERLOG is acknowledged with its count, as attendance is.
    return this.answer('upload', 'ok', text(200, table === 'OPERLOG' ? `OK: ${lines}` : 'OK'))
  }

  private async attendance(
    terminal: AdmsTerminal,
    target: AdmsTarget,
    data: Buffer,
    lines: number,
  ): Promise<AdmsResponse> {
    const now = this.now()
    let received = 0
    if (lines > 0) {
      try {
        received = (await this.options.sink.accept(terminal.deviceId, 'adms', data)).records
      } catch (err) {
        // Not stored: not OK. The terminal keeps the records and sends them again after ErrorDelay.
        // A full spool logs and raises its own alarm; anything else (a failing disk) is logged here.
        if (!(err instanceof SpoolFullError)) terminal.log.error({ err }, 'attendance upload not stored')
        return this.answer(
          'upload',
          'unavailable',
          text(503, err instanceof SpoolFullError ? err.message : 'the agent could not store the records', {
            'Retry-After': String(this.options.config.errorDelaySeconds),
          }),
        )
      }
    }
    // Durable now: the terminal may move its cursor past these records, and so may the agent.
    const stamp = stampOf(target.query)
    if (stamp !== undefined) this.store.setAttlogStamp(terminal.serialNumber, stamp)
    terminal.lastUploadMs = now
    terminal.uploads++
    terminal.recordsReceived += received
    terminal.log.debug({ records: received, stamp }, 'attendance upload stored')
    return this.answer('upload', 'ok', text(200, `OK: ${received}`))
  }

  private poll(terminal: AdmsTerminal, target: AdmsTarget): AdmsResponse {
    const info = target.query.get('INFO') ?? target.query.get('info')
    if (info) this.store.mergeInfo(terminal.serialNumber, parseInfoParameter(info))
    const commands = this.store.takeQueued(terminal.serialNumber, COMMANDS_PER_POLL)
    for (const command of commands) {
      terminal.log.info({ commandId: command.id, command: command.text }, 'command handed to the terminal')
    }
    return text(200, pollReply(commands))
  }

  private results(terminal: AdmsTerminal, data: Buffer): AdmsResponse {
    for (const result of parseCommandResults(data.toString('utf8'))) {
      const command = this.store.complete(terminal.serialNumber, result.id, result.returnCode)
      if (!command) {
        terminal.log.info(
          { commandId: result.id, returnCode: result.returnCode },
          'result for no known command',
        )
        continue
      }
      if (command.kind === 'info' && result.returnCode === 0) {
        this.store.mergeInfo(terminal.serialNumber, parseInfoDetails(result.details))
      }
      terminal.log.info(
        { commandId: command.id, command: command.text, returnCode: result.returnCode },
        result.returnCode === 0 ? 'command done' : 'command refused by the terminal',
      )
    }
    return text(200, 'OK')
  }

  private refused(reason: 'address' | 'bad_http', address: string): void {
    this.options.events.emit('admsRequest', {
      route: 'other',
      outcome: reason === 'address' ? 'refused' : 'bad_request',
    })
    if (reason === 'address' && this.logOnce(`address|${address}`)) {
      this.log.warn({ address: displayAddress(address) }, 'connection refused: not in adms.allowFrom')
    }
  }

  /** True the first time a key is seen in an hour; the map is cleared if it grows (many peers). */
  private logOnce(key: string): boolean {
    const now = this.now()
    const last = this.refusedLogged.get(key)
    if (last !== undefined && now - last < LOG_EVERY_MS) return false
    if (this.refusedLogged.size >= 1024) this.refusedLogged.clear()
    this.refusedLogged.set(key, now)
    return true
  }
}
