/**
 * hajri-cloud as a real child process, `node --import tsx cloud/cli.ts serve`, the way a service
 * manager runs it, so that it can be killed (SIGKILL) mid-dispatch and
 * restarted (docs/development/architecture.md#events-and-webhooks). Each start is a new process on the same
 * environment (database, port, key), as after `Restart=always`. Its JSON log lines go to a file; those of
 * level error and above are kept, and a test may watch every line (which instance delivered what, at
 * HAJRI_LOG_LEVEL=debug).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { sleep } from './e2e-kit.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

/** Every cloud child alive in this process, killed on exit whatever happened to the test. */
const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

export interface CloudLogLine {
  level: number
  msg?: string
  [field: string]: unknown
}

/** pino levels: 50 error, 60 fatal. */
const ERROR = 50

export interface UnexpectedExit {
  run: number
  code: number | null
  signal: NodeJS.Signals | null
  /** The process's last lines of output. */
  tail: string[]
}

export interface CloudProcessOptions {
  /** HAJRI_* settings, added to this process's environment; HAJRI_PORT must be among them. */
  env: Record<string, string>
  /** Where every run's output is appended. */
  logPath: string
  /** Called with every JSON log line, with the run it came from. */
  onLogLine?: (line: CloudLogLine, run: number) => void
}

export class CloudProcess {
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  private expectingExit = false
  /** Set by dispose(): a test that timed out may still be running its loop, and must not spawn more. */
  private disposed = false
  private tail: string[] = []
  private readonly logFile: WriteStream
  readonly port: number
  /** Processes started so far. */
  runs = 0
  /** Exits nobody asked for: a crash. */
  readonly unexpectedExits: UnexpectedExit[] = []
  /** Log lines of level error or fatal, with the run they came from. */
  readonly errors: (CloudLogLine & { run: number })[] = []

  constructor(private readonly options: CloudProcessOptions) {
    const port = Number(options.env.HAJRI_PORT)
    if (!Number.isInteger(port) || port <= 0) throw new Error('CloudProcess needs HAJRI_PORT')
    this.port = port
    this.logFile = createWriteStream(options.logPath, { flags: 'a' })
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  /** Starts a process and returns at once (it migrates, then listens, then dispatches). */
  spawn(): void {
    if (this.disposed) throw new Error('the cloud process was disposed of')
    if (this.alive) throw new Error('the cloud process is already running')
    const run = ++this.runs
    this.expectingExit = false
    this.tail = []
    const child = spawn(process.execPath, ['--import', 'tsx', 'cloud/cli.ts', 'serve'], {
      cwd: REPO,
      env: { ...process.env, ...this.options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.add(child)
    this.child = child
    this.logFile.write(`--- run ${run}, pid ${child.pid} ---\n`)

    const keep = (line: string) => {
      this.logFile.write(`${line}\n`)
      this.tail.push(line)
      if (this.tail.length > 40) this.tail.shift()
    }
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      keep(line)
      let parsed: CloudLogLine | undefined
      try {
        parsed = JSON.parse(line) as CloudLogLine
      } catch {
        return
      }
      if (typeof parsed.level === 'number' && parsed.level >= ERROR) this.errors.push({ ...parsed, run })
      this.options.onLogLine?.(parsed, run)
    })
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) =>
      keep(`stderr: ${line}`),
    )
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        children.delete(child)
        if (!this.expectingExit) this.unexpectedExits.push({ run, code, signal, tail: [...this.tail] })
        resolve()
      })
    })
  }

  /**
   * Resolves once GET /readyz answers 200 (listening, database reachable; the dispatcher started on
   * the app's ready, before listening); rejects if the process exits first or after `timeoutMs`.
   */
  async ready(timeoutMs = 30_000): Promise<void> {
    const child = this.child
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (!child || child !== this.child || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`hajri-cloud (run ${this.runs}) exited before it was ready:\n${this.tail.join('\n')}`)
      }
      try {
        const response = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2000) })
        if (response.ok) return
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        throw new Error(`hajri-cloud not ready after ${timeoutMs} ms:\n${this.tail.join('\n')}`)
      }
      await sleep(25)
    }
  }

  /** Starts a process and waits until it is ready. */
  async start(timeoutMs = 30_000): Promise<void> {
    this.spawn()
    await this.ready(timeoutMs)
  }

  /**
   * SIGKILL, sent now (synchronously, so a caller can note what was in flight at this very moment):
   * no handler runs, nothing is flushed or closed. Returns false when no process was running.
   */
  killNow(): boolean {
    const child = this.child
    if (!child || !this.alive) return false
    this.expectingExit = true
    child.kill('SIGKILL')
    return true
  }

  /** SIGKILL, and waits until the process is gone. */
  async kill(): Promise<void> {
    this.killNow()
    await this.exited
  }

  /** Resolves when the current process has exited. */
  whenExited(): Promise<void> {
    return this.exited
  }

  /** SIGTERM, the service manager's stop: resolves with the exit code (0 for a clean stop). */
  async stop(): Promise<number | null> {
    const child = this.child
    if (!child || !this.alive) return child?.exitCode ?? null
    this.expectingExit = true
    const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
    child.kill('SIGTERM')
    const [code] = await exit
    return code
  }

  /** Kills the process if it is still there and closes the log file. */
  async dispose(): Promise<void> {
    this.disposed = true
    await this.kill()
    await new Promise<void>((resolve) => this.logFile.end(() => resolve()))
  }
}
