import type { EventBus } from '../events.js'

export interface DeviceStatus {
  id: string
  transports: string[]
  state: 'connected' | 'disconnected' | 'waiting' | 'unknown'
  detail: string | null
  stateSince: string | null
  punches: number
  malformedFrames: number
  lastPunchAt: string | null
  lastPunchedAt: string | null
  /** Device clock minus agent clock on the last punch, in seconds (0 for a device that sends no time). */
  clockSkewSeconds: number | null
}

export interface ForwardingStatus {
  forwarded: number
  /** Punches a second over the last minute. */
  ratePerSecond: number
  lastSuccessAt: string | null
  lastError: { at: string; message: string; retryInMs: number } | null
}

const WINDOW_MS = 60_000

/** What is kept per device: times as numbers, made into text only when status is asked for. */
interface DeviceState extends Omit<DeviceStatus, 'stateSince' | 'lastPunchAt'> {
  stateSinceMs: number | null
  lastPunchAtMs: number | null
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
  spoolFullSince: string | null = null

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
        malformedFrames: 0,
        lastPunchAtMs: null,
        lastPunchedAt: null,
        clockSkewSeconds: null,
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
        device.clockSkewSeconds = e.skewSeconds ?? null
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
        // Forgotten here too, not only when the status is read: an agent nobody asks about for
        // months must not keep a record of every batch it sent.
        this.forgetBefore(now - WINDOW_MS)
      }),
      events.on('forwardFailed', (e) => {
        this.lastError = { at: at(), message: e.error, retryInMs: e.retryInMs }
      }),
      events.on('spoolFull', () => {
        this.spoolFullSince ??= at()
      }),
    )
  }

  stop(): void {
    for (const off of this.unsubscribe.splice(0)) off()
  }

  deviceStatuses(): DeviceStatus[] {
    return [...this.devices.values()].map((d) => ({
      id: d.id,
      transports: d.transports,
      state: d.state,
      detail: d.detail,
      stateSince: iso(d.stateSinceMs),
      punches: d.punches,
      malformedFrames: d.malformedFrames,
      lastPunchAt: iso(d.lastPunchAtMs),
      lastPunchedAt: d.lastPunchedAt,
      clockSkewSeconds: d.clockSkewSeconds,
    }))
  }

  forwardingStatus(): ForwardingStatus {
    this.forgetBefore(this.now() - WINDOW_MS)
    const inWindow = this.recent.reduce((sum, [, count]) => sum + count, 0)
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
