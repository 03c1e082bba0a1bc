import type { EventBus } from '../events.js'
import type { DeviceDetails } from '../inputs/device-report.js'

export interface DeviceStatus {
  id: string
  transports: string[]
  state: 'connected' | 'disconnected' | 'waiting' | 'unknown'
  detail: string | null
  stateSince: string | null
  punches: number
  /** Punches sent again that were stored lately already (harmless: the cloud keeps one). */
  resends: number
  malformedFrames: number
  lastPunchAt: string | null
  lastPunchedAt: string | null
  /**
   * Device clock minus agent clock, in seconds, estimated from its recent frames (0 for a device
   * that sends no time): see SKEW_SAMPLES.
   */
  clockSkewSeconds: number | null
  /** A networked terminal's own health (ADMS push terminals). */
  details?: DeviceDetails
}

export interface ForwardingStatus {
  forwarded: number
  /** Punches a second over the last minute. */
  ratePerSecond: number
  lastSuccessAt: string | null
  lastError: { at: string; message: string; retryInMs: number } | null
}

const WINDOW_MS = 60_000
/**
 * A punch cannot be received before it is made, so each frame's newest punch time minus its
 * receipt time is a lower bound of the device's clock skew (it is lower by however long the punch
 * waited: a terminal uploading a backlog, a serial device that buffered). The largest of the last
 * few such bounds is the estimate: one live punch pins it, and a backlog does not swing it.
 */
const SKEW_SAMPLES = 16

/** What is kept per device: times as numbers, made into text only when status is asked for. */
interface DeviceState extends Omit<DeviceStatus, 'stateSince' | 'lastPunchAt' | 'details'> {
  stateSinceMs: number | null
  lastPunchAtMs: number | null
  skewSamples: number[]
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/**
 * Follows the event bus to answer "what is the agent doing": per device state and last punch, and
 * the forwarding rate (punches a second over the last minute) with the last error.
 */
export class StatusTracker {
  private readonly devices = new Map<string, DeviceState>()
  private forwarded = 0
  /** Set on every forwarded batch, so a number; formatted when status is read. */
  private lastSuccessAtMs: number | null = null
  private lastError: ForwardingStatus['lastError'] = null
  /** [time ms, count] of recent forwards, oldest first. */
  private readonly recent: [number, number][] = []
  private readonly unsubscribe: (() => void)[] = []
  readonly startedAt = new Date()
  private fullSince: string | null = null

  constructor(
    devices: { id: string; transports: string[] }[],
    private readonly now: () => number = Date.now,
  ) {
    for (const d of devices) {
      this.devices.set(d.id, {
        id: d.id,
        transports: d.transports,
        state: 'unknown',
        detail: null,
        stateSinceMs: null,
        punches: 0,
        resends: 0,
        malformedFrames: 0,
        lastPunchAtMs: null,
        lastPunchedAt: null,
        clockSkewSeconds: null,
        skewSamples: [],
      })
    }
  }

  follow(events: EventBus): void {
    // Punch events come thousands a second during ingest and drains: they note the time as a
    // number; only the rarer events format it at once.
    const at = () => new Date(this.now()).toISOString()
    this.unsubscribe.push(
      events.on('deviceState', (e) => {
        const device = this.devices.get(e.deviceId)
        if (!device) return
        if (device.state !== e.state) device.stateSinceMs = this.now()
        device.state = e.state
        device.detail = e.detail ?? null
      }),
      events.on('punchesSpooled', (e) => {
        const device = this.devices.get(e.deviceId)
        if (!device) return
        device.punches += e.count
        device.lastPunchAtMs = this.now()
        device.lastPunchedAt = e.lastPunchedAt
        if (e.skewSeconds !== undefined) {
          device.skewSamples.push(e.skewSeconds)
          if (device.skewSamples.length > SKEW_SAMPLES) device.skewSamples.shift()
          device.clockSkewSeconds = Math.max(...device.skewSamples)
        }
      }),
      events.on('punchesResent', (e) => {
        const device = this.devices.get(e.deviceId)
        if (device) device.resends += e.count
      }),
      events.on('frameMalformed', (e) => {
        const device = this.devices.get(e.deviceId)
        if (device) device.malformedFrames++
      }),
      events.on('punchesForwarded', (e) => {
        const now = this.now()
        this.forwarded += e.count
        this.lastSuccessAtMs = now
        this.recent.push([now, e.count])
        // Forgotten here, as batches come: an agent nobody asks about for months must not keep a
        // record of every batch it sent.
        this.forgetBefore(now - WINDOW_MS)
      }),
      events.on('forwardFailed', (e) => {
        this.lastError = { at: at(), message: e.error, retryInMs: e.retryInMs }
      }),
      events.on('spoolFull', () => {
        this.fullSince ??= at()
      }),
      events.on('spoolHasRoom', () => {
        this.fullSince = null
      }),
    )
  }

  stop(): void {
    for (const off of this.unsubscribe.splice(0)) off()
  }

  /** When the spool began refusing punches; null while it takes them. */
  get spoolFullSince(): string | null {
    return this.fullSince
  }

  deviceStatuses(): DeviceStatus[] {
    return [...this.devices.values()].map((d) => ({
      id: d.id,
      transports: d.transports,
      state: d.state,
      detail: d.detail,
      stateSince: iso(d.stateSinceMs),
      punches: d.punches,
      resends: d.resends,
      malformedFrames: d.malformedFrames,
      lastPunchAt: iso(d.lastPunchAtMs),
      lastPunchedAt: d.lastPunchedAt,
      clockSkewSeconds: d.clockSkewSeconds,
    }))
  }

  forwardingStatus(): ForwardingStatus {
    // Reading changes nothing: batches older than the window are skipped here, and forgotten when
    // the next batch is forwarded.
    const cutoff = this.now() - WINDOW_MS
    const inWindow = this.recent.reduce((sum, [time, count]) => (time < cutoff ? sum : sum + count), 0)
    const span = Math.max(1000, Math.min(WINDOW_MS, this.now() - this.startedAt.getTime()))
    return {
      forwarded: this.forwarded,
      ratePerSecond: Math.round((inWindow / span) * 1000 * 10) / 10,
      lastSuccessAt: iso(this.lastSuccessAtMs),
      lastError: this.lastError,
    }
  }

  private forgetBefore(cutoff: number): void {
    while (this.recent.length > 0 && (this.recent[0] as [number, number])[0] < cutoff) this.recent.shift()
  }
}
