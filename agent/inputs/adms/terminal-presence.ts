import type { EventBus } from '../../events.js'
import type { AdmsTerminal } from './adms-terminal.js'

/**
 * Whether each push terminal is there, told on the event bus as the device's state: `waiting`
 * until its first request, `connected` while it makes them, and `disconnected` once it has been
 * silent for `offlineAfterMs`. A terminal polls every few seconds, so one silent for longer is
 * off, unplugged or misconfigured.
 */
export class TerminalPresence {
  private watch: NodeJS.Timeout | undefined
  private startedMs = 0

  constructor(
    private readonly terminals: readonly AdmsTerminal[],
    private readonly options: {
      events: EventBus
      now: () => number
      offlineAfterMs: number
      watchEveryMs: number
    },
  ) {}

  start(): void {
    this.startedMs = this.options.now()
    for (const terminal of this.terminals) {
      this.options.events.emit('deviceState', {
        deviceId: terminal.deviceId,
        state: 'waiting',
        detail: 'no request from the terminal yet',
      })
    }
    this.watch = setInterval(() => this.markSilent(), this.options.watchEveryMs)
    this.watch.unref()
  }

  stop(): void {
    clearInterval(this.watch)
    this.watch = undefined
  }

  /** A request from the terminal, from `address`. */
  touch(terminal: AdmsTerminal, address: string): void {
    terminal.lastContactMs = this.options.now()
    terminal.address = address
    if (terminal.state === 'connected') return
    terminal.state = 'connected'
    this.options.events.emit('deviceState', {
      deviceId: terminal.deviceId,
      state: 'connected',
      detail: `ADMS terminal ${terminal.serialNumber} at ${address}`,
    })
  }

  private markSilent(): void {
    const now = this.options.now()
    for (const terminal of this.terminals) {
      if (terminal.state === 'disconnected') continue
      const since = terminal.lastContactMs ?? this.startedMs
      if (now - since < this.options.offlineAfterMs) continue
      terminal.state = 'disconnected'
      const seconds = Math.round((now - since) / 1000)
      this.options.events.emit('deviceState', {
        deviceId: terminal.deviceId,
        state: 'disconnected',
        detail:
          terminal.lastContactMs === null
            ? `no request from the terminal in the ${seconds} s since the agent started`
            : `no request from the terminal for ${seconds} s`,
      })
    }
  }
}
