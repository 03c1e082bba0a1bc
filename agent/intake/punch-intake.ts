import type { Logger } from 'pino'
import { formatServerTime, nowMicros, parseTimestamp } from '../../shared/time.js'
import type { AgentConfig, DeviceConfig, Transport } from '../config/schema.js'
import type { EventBus } from '../events.js'
import { type RecordFormat, recordFormat } from '../formats/record-format.js'
import { type NormalizeContext, normalizePunch } from '../punch/normalize.js'
import type { SpooledPunch } from '../punch/spooled-punch.js'
import type { DeadLetters, NewDeadLetter } from '../spool/dead-letters.js'
import type { Spool } from '../spool/spool.js'
import type { AcceptSummary, PunchSink } from './punch-sink.js'
import { RecentPunchIds } from './recent-punch-ids.js'

/** How much of a bad frame goes into logs (hex) and dead letters (text). */
const LOGGED_BYTES = 64
const KEPT_CHARACTERS = 1024
/**
 * Punch ids remembered to tell a resend from a new punch, for all devices together: a few MB at
 * most (ids are 36 characters), and more than a terminal's largest upload batch many times over.
 */
const RECENT_IDS = 20_000

interface Device {
  config: DeviceConfig
  formats: Partial<Record<Transport, RecordFormat>>
  log: Logger
}

/**
 * Frames to punches to the spool (docs/development/architecture.md#data-flow-in-the-agent): each frame is
 * read with its device's record format, each record made a punch in the device's time zone, and the lot
 * stored durably; what cannot be read or is implausible goes to dead letters instead, so nothing is dropped.
 * A bad frame never stops its device.
 */
export class PunchIntake implements PunchSink {
  private readonly devices = new Map<string, Device>()
  private readonly clockFloor: number
  private readonly recent = new RecentPunchIds(RECENT_IDS)

  constructor(
    private readonly deps: {
      config: Pick<AgentConfig, 'site' | 'devices'>
      spool: Pick<Spool, 'append'>
      deadLetters: Pick<DeadLetters, 'add'>
      events: EventBus
      log: Logger
      now?: () => number
    },
  ) {
    const floor = parseTimestamp(deps.config.site.clockFloor)
    if (floor === undefined) throw new Error(`site.clockFloor "${deps.config.site.clockFloor}" is not a time`)
    this.clockFloor = floor
    for (const config of deps.config.devices) {
      const formats: Device['formats'] = {}
      if (config.mqtt) formats.mqtt = recordFormat(config, 'mqtt')
      if (config.serial) formats.serial = recordFormat(config, 'serial')
      if (config.adms) formats.adms = recordFormat(config, 'adms')
      if (config.zk) formats.zk = recordFormat(config, 'zk')
      this.devices.set(config.id, { config, formats, log: deps.log.child({ deviceId: config.id }) })
    }
  }

  async rejectFrame(deviceId: string, _transport: Transport, raw: Buffer, detail: string): Promise<void> {
    await this.deps.deadLetters.add([
      { deviceId, reason: 'malformed_frame', detail, raw: raw.toString('utf8').slice(0, KEPT_CHARACTERS) },
    ])
    this.deps.events.emit('deadLettered', { deviceId, reason: 'malformed_frame', count: 1 })
  }

  async accept(deviceId: string, transport: Transport, frame: Buffer): Promise<AcceptSummary> {
    const device = this.devices.get(deviceId)
    const format = device?.formats[transport]
    if (!device || !format) throw new Error(`no ${transport} device ${deviceId}`)
    const now = this.deps.now?.() ?? nowMicros()
    const parsed = format(frame.toString('utf8'))
    const context: NormalizeContext = {
      deviceId,
      timeZone: device.config.timezone ?? this.deps.config.site.timezone,
      clockFloor: this.clockFloor,
      statusMap: device.config.statusMap,
      fixedPunchType: device.config.punchType,
      pin: device.config.pin ?? this.deps.config.site.pin,
      now,
      receivedAt: formatServerTime(now),
    }
    const punches: SpooledPunch[] = []
    let resent = 0
    /** The newest punch's instant (a terminal's batch is in time order, but need not be). */
    let newest = Number.NEGATIVE_INFINITY
    const dead: NewDeadLetter[] = []
    for (const { record, error } of parsed.malformed) {
      device.log.warn(
        { error, bytes: frame.length, frame: frame.subarray(0, LOGGED_BYTES).toString('hex') },
        'malformed frame',
      )
      this.deps.events.emit('frameMalformed', { deviceId, error })
      dead.push({ deviceId, reason: 'malformed_frame', detail: error, raw: record.slice(0, KEPT_CHARACTERS) })
    }
    for (const record of parsed.punches) {
      const normalized = normalizePunch(record, context)
      if (normalized.ok) {
        // Stored again all the same: the id makes the copy harmless, and counting is all this is for.
        if (this.recent.has(normalized.punch.id)) resent++
        punches.push(normalized.punch)
        if (normalized.at > newest) newest = normalized.at
      } else {
        device.log.warn(
          { reason: normalized.reason, detail: normalized.detail },
          'punch parked in dead letters',
        )
        dead.push({
          deviceId,
          reason: normalized.reason,
          detail: normalized.detail,
          ...(normalized.punch
            ? { punch: normalized.punch }
            : { raw: JSON.stringify(record).slice(0, KEPT_CHARACTERS) }),
        })
      }
    }
    // The spool first: if it refuses, nothing was stored and the source sends the frame again, so
    // its dead letters must not be written yet (they would be written once per attempt).
    await this.deps.spool.append(punches)
    for (const punch of punches) this.recent.add(punch.id)
    if (dead.length > 0) await this.deps.deadLetters.add(dead)
    if (resent > 0) this.deps.events.emit('punchesResent', { deviceId, count: resent })
    if (dead.length > 0) {
      this.deps.events.emit('deadLettered', {
        deviceId,
        reason: dead[0]?.reason ?? 'malformed_frame',
        count: dead.length,
      })
    }
    const last = punches.at(-1)
    if (last) {
      this.deps.events.emit('punchesSpooled', {
        deviceId,
        count: punches.length,
        lastPunchedAt: last.punchedAt,
        // A lower bound of how far the device clock is ahead of ours (see StatusTracker's estimate).
        skewSeconds: Math.round((newest - now) / 1_000_000),
      })
    }
    return {
      records: parsed.punches.length + parsed.malformed.length,
      spooled: punches.length,
      resent,
      deadLettered: dead.length,
    }
  }
}
