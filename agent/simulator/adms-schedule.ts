/** The delays of the last handshake reply, in ms, already scaled. */
export interface AdmsTiming {
  /** Realtime=1: upload a record as soon as it is made; else every TransInterval. */
  realtime: boolean
  errorDelayMs: number
  delayMs: number
  transIntervalMs: number
}

/** setTimeout's longest wait. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * When push firmware does what, between handshakes: a command poll every Delay, uploads as soon as
 * there is something to send (Realtime=1) or every TransInterval (else, or when a LOG command asks),
 * and ErrorDelay after a failure before the same step is tried again. Also the one timer the device
 * waits on, which stop() and reboot() cut short.
 */
export class AdmsSchedule {
  private nextPollAt = 0
  private uploadRetryAt = 0
  private nextTransferAt = 0
  private uploadRequested = false
  private napping: { wake: () => void; wakeable: boolean } | undefined

  constructor(
    private readonly timing: () => AdmsTiming,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A new session: poll at once; upload at once (Realtime) or after a TransInterval. */
  reset(): void {
    const now = this.now()
    this.nextPollAt = now
    this.uploadRetryAt = 0
    this.uploadRequested = false
    this.nextTransferAt = now + this.timing().transIntervalMs
  }

  /** The next step: a poll, an upload, or a wait of so many ms (a new record may end it). */
  next(hasPending: boolean): 'poll' | 'upload' | number {
    const now = this.now()
    if (now >= this.nextPollAt) return 'poll'
    const timing = this.timing()
    if (!hasPending) {
      this.uploadRequested = false
      return this.nextPollAt - now
    }
    if (!timing.realtime && !this.uploadRequested && now >= this.nextTransferAt) {
      this.uploadRequested = true
      this.nextTransferAt = now + timing.transIntervalMs
    }
    const uploadAt = Math.max(
      this.uploadRetryAt,
      timing.realtime || this.uploadRequested ? now : this.nextTransferAt,
    )
    if (now >= uploadAt) return 'upload'
    return Math.min(this.nextPollAt, uploadAt) - now
  }

  /** A poll is done: the next after Delay, or after ErrorDelay when it failed. */
  polled(ok: boolean): void {
    const timing = this.timing()
    this.nextPollAt = this.now() + (ok ? timing.delayMs : timing.errorDelayMs)
  }

  /** An upload or ping failed: the same batch again after ErrorDelay. */
  uploadFailed(): void {
    this.uploadRetryAt = this.now() + this.timing().errorDelayMs
  }

  /** The LOG command: upload what is pending now, whatever Realtime says. */
  requestUpload(): void {
    this.uploadRequested = true
  }

  /** Waits `ms`; wake() ends a `wakeable` wait early, interrupt() any wait. */
  nap(ms: number, wakeable: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        if (this.napping?.wake === wake) this.napping = undefined
        resolve()
      }
      const timer = setTimeout(wake, Math.min(MAX_TIMER_MS, Math.max(0, ms)))
      this.napping = { wake, wakeable }
    })
  }

  /** Something new to do (a record): a wait for the next step ends now. */
  wake(): void {
    if (this.napping?.wakeable) this.napping.wake()
  }

  /** stop() or reboot(): any wait ends now, and its timer with it. */
  interrupt(): void {
    this.napping?.wake()
  }
}
