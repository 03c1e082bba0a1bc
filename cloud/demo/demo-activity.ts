/** The part of the agent's GET /status the demo reads (agent/status/agent-status.ts). */
interface StatusSummary {
  forwarding: { forwarded: number }
  deadLetters: { count: number }
}

interface AgentActivityOptions {
  /** `http://127.0.0.1:9411`: the agent's status listener. */
  statusUrl: string
  intervalMs: number
  say: (text: string) => void
  /** The command that lists dead letters, for the line that reports them. */
  deadLettersCommand: string
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`
}

/**
 * One readable line when the agent forwards punches or parks some in dead letters, read from its
 * status listener: the agent does not log each forward (a busy site would flood its log), and the
 * demo's output should show that punches flow without showing the agent's JSON log.
 */
export class AgentActivity {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private forwarded = 0
  private deadLetters: number | undefined

  constructor(private readonly options: AgentActivityOptions) {}

  start(): void {
    this.schedule()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** One look at the agent's status; what changed since the last look is said. */
  async poll(): Promise<void> {
    const status = await this.read()
    if (!status || this.stopped) return
    const { say } = this.options
    const forwarded = status.forwarding.forwarded
    if (forwarded > this.forwarded) {
      const n = forwarded - this.forwarded
      say(`agent: forwarded ${plural(n, 'punch', 'punches')} to the cloud (${forwarded} since it started)`)
    }
    this.forwarded = forwarded
    const dead = status.deadLetters.count
    if (dead > (this.deadLetters ?? 0)) {
      const n = dead - (this.deadLetters ?? 0)
      const what = this.deadLetters === undefined ? 'in dead letters' : 'newly parked in dead letters'
      say(`agent: ${plural(n, 'punch', 'punches')} ${what}; see ${this.options.deadLettersCommand}`)
    }
    this.deadLetters = dead
  }

  private schedule(): void {
    if (this.stopped) return
    // Never keeps the demo alive by itself; a poll's failure is only a missed line.
    this.timer = setTimeout(() => {
      this.poll()
        .catch(() => {})
        .finally(() => this.schedule())
    }, this.options.intervalMs)
    this.timer.unref()
  }

  private async read(): Promise<StatusSummary | undefined> {
    try {
      const response = await fetch(`${this.options.statusUrl}/status`, { signal: AbortSignal.timeout(5000) })
      if (!response.ok) return undefined
      const body = (await response.json()) as Partial<StatusSummary>
      if (typeof body.forwarding?.forwarded !== 'number' || typeof body.deadLetters?.count !== 'number')
        return undefined
      return body as StatusSummary
    } catch {
      return undefined
    }
  }
}
