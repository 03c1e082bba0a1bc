/** A terminal that pushes to the agent with a serial number no device has. */
interface UnknownTerminal {
  serialNumber: string
  address: string
  firstSeenAt: string
  lastSeenAt: string
  requests: number
}

/** At most this many are remembered: a LAN full of strangers must not fill the agent's memory. */
const MAX_REMEMBERED = 64
/** Forgotten after a day of silence (a terminal since unplugged, or reconfigured). */
const FORGET_AFTER_MS = 24 * 3600_000
/** One log line per terminal per hour, however often it tries. */
const LOG_EVERY_MS = 3600_000

interface Entry {
  address: string
  firstSeenMs: number
  lastSeenMs: number
  requests: number
  loggedMs: number | undefined
}

/** Silent for longer than FORGET_AFTER_MS. */
const isStale = (entry: Entry, now: number) => now - entry.lastSeenMs > FORGET_AFTER_MS

/**
 * Terminals refused for an unknown serial number, so IT staff see a terminal they forgot to
 * configure (`hajri-agent status` lists them with their address and last contact). Nothing they
 * send is stored; they are refused with a non-OK answer and so keep their records for later.
 */
export class UnknownTerminals {
  private readonly entries = new Map<string, Entry>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Notes a contact; true when it should be logged (first time this hour). */
  seen(serialNumber: string, address: string): boolean {
    const now = this.now()
    this.forgetStale(now)
    let entry = this.entries.get(serialNumber)
    if (entry) this.entries.delete(serialNumber)
    else {
      if (this.entries.size >= MAX_REMEMBERED) {
        // Map order is insertion order, and every contact re-inserts: the first is the least recent.
        const oldest = this.entries.keys().next().value
        if (oldest !== undefined) this.entries.delete(oldest)
      }
      entry = { address, firstSeenMs: now, lastSeenMs: now, requests: 0, loggedMs: undefined }
    }
    entry.address = address
    entry.lastSeenMs = now
    entry.requests++
    this.entries.set(serialNumber, entry)
    if (entry.loggedMs !== undefined && now - entry.loggedMs < LOG_EVERY_MS) return false
    entry.loggedMs = now
    return true
  }

  /** Reading changes nothing (it is status): the stale are skipped here, forgotten at the next contact. */
  list(): UnknownTerminal[] {
    const now = this.now()
    return [...this.entries]
      .filter(([, e]) => !isStale(e, now))
      .map(([serialNumber, e]) => ({
        serialNumber,
        address: e.address,
        firstSeenAt: new Date(e.firstSeenMs).toISOString(),
        lastSeenAt: new Date(e.lastSeenMs).toISOString(),
        requests: e.requests,
      }))
      .reverse()
  }

  private forgetStale(now: number): void {
    for (const [serialNumber, entry] of this.entries) {
      if (isStale(entry, now)) this.entries.delete(serialNumber)
    }
  }
}
