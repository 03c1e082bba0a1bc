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

/**
 * Follows the event bus to answer "what is the agent doing": per device state and last punch, and
 * the forwarding rate (punches a second over the last minute) with the last error.
 */
export class StatusTracker {
  private readonly devices = new Map<string, DeviceStatus>()
  private readonly forwarding: ForwardingStatus = {
    forwarded: 0,
    ratePerSecond: 0,
    lastSuccessAt: null,
    lastError: null,
  }
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
        stateSince: null,
        punches: 0,
        malformedFrames: 0,
        lastPunchAt: null,
        lastPunchedAt: null,
        clockSkewSeconds: null,
      })
    }
  }

  follow(events: EventBus): void {
    const at = () => new Date(this.now()).toISOString()
    this.unsubscribe.push(
      events.on('deviceState', (e) => {
        const device = this.devices.get(e.deviceId)
        if (!device) return
        if (device.state !== e.state) device.stateSince = at()
        device.state = e.state
        device.detail = e.detail ?? null
      }),
      events.on('punchesSpooled', (e) => {
        const device = this.devices.get(e.deviceId)
        if (!device) return
        device.punches += e.count
        device.lastPunchAt = at()
        device.lastPunchedAt = e.lastPunchedAt
        device.clockSkewSeconds = e.skewSeconds ?? null
      }),
      events.on('frameMalformed', (e) => {
        const device = this.devices.get(e.deviceId)
        if (device) device.malformedFrames++
      }),
      events.on('punchesForwarded', (e) => {
        this.forwarding.forwarded += e.count
        this.forwarding.lastSuccessAt = at()
        this.recent.push([this.now(), e.count])
      }),
      events.on('forwardFailed', (e) => {
        this.forwarding.lastError = { at: at(), message: e.error, retryInMs: e.retryInMs }
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
    return [...this.devices.values()]
  }

  forwardingStatus(): ForwardingStatus {
    const cutoff = this.now() - WINDOW_MS
    while (this.recent.length > 0 && (this.recent[0] as [number, number])[0] < cutoff) this.recent.shift()
    const inWindow = this.recent.reduce((sum, [, count]) => sum + count, 0)
    const span = Math.max(1000, Math.min(WINDOW_MS, this.now() - this.startedAt.getTime()))
    return { ...this.forwarding, ratePerSecond: Math.round((inWindow / span) * 1000 * 10) / 10 }
  }
}
