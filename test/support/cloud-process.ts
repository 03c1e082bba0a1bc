/**
 * hajri-cloud as a real child process, `node --import tsx cloud/cli.ts serve`, the way a service
 * manager runs it, so that it can be killed (SIGKILL) mid-dispatch and
 * restarted (docs/development/architecture.md#events-and-webhooks). Each start is a new process on the same
 * environment (database, port, key), as after `Restart=always`. Its JSON log lines go to a file; those of
 * level error and above are kept, and a test may watch every line (which instance delivered what, at
 * HAJRI_LOG_LEVEL=debug).
 */
import { ChildProgram, type LogLine } from './child-program.js'
import { sleep } from './e2e-kit.js'

export interface CloudProcessOptions {
  /** HAJRI_* settings, added to this process's environment; HAJRI_PORT must be among them. */
  env: Record<string, string>
  /** Where every run's output is appended. */
  logPath: string
  /** Called with every JSON log line, with the run it came from. */
  onLogLine?: (line: LogLine, run: number) => void
}

export class CloudProcess extends ChildProgram {
  readonly port: number

  constructor(private readonly options: CloudProcessOptions) {
    super({
      name: 'hajri-cloud',
      args: ['--import', 'tsx', 'cloud/cli.ts', 'serve'],
      env: options.env,
      logPath: options.logPath,
    })
    const port = Number(options.env.HAJRI_PORT)
    if (!Number.isInteger(port) || port <= 0) throw new Error('CloudProcess needs HAJRI_PORT')
    this.port = port
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Starts a process and returns at once (it migrates, then listens, then dispatches). */
  spawn(): void {
    const run = this.startRun({ onLogLine: (line) => this.options.onLogLine?.(line, run) })
  }

  /**
   * Resolves once GET /readyz answers 200 (listening, database reachable; the dispatcher started on
   * the app's ready, before listening); rejects if the process exits first or after `timeoutMs`.
   */
  async ready(timeoutMs = 30_000): Promise<void> {
    const child = this.current
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (!child || child !== this.current || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`hajri-cloud (run ${this.runs}) exited before it was ready:\n${this.tail}`)
      }
      try {
        const response = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) })
        if (response.ok) return
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        throw new Error(`hajri-cloud not ready after ${timeoutMs} ms:\n${this.tail}`)
      }
      await sleep(25)
    }
  }

  /** Starts a process and waits until it is ready. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.spawn()
    await this.ready(timeoutMs)
  }
}
