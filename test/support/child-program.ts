/**
 * One of our programs as real child processes, run again and again on the same settings the way a
 * service manager runs it (`Restart=always`, deploy/), so that a test can kill a run (SIGKILL) at
 * any moment or stop it (SIGTERM) and start the next. Every run's output is appended to one file;
 * its JSON log lines of level error and above are kept with the run they came from, and its last
 * lines are at hand to say why a run failed. `agent-process.ts` and `cloud-process.ts` are the two
 * programs; `spawnTracked` and `stopChild` serve any other child (the benchmarks').
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Every child alive in this process, killed on exit whatever happened to the test. */
const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

/** Starts a child and keeps it among those killed on exit until it exits. */
export function spawnTracked(
  command: string,
  args: readonly string[],
  options: Parameters<typeof spawn>[2],
): ChildProcess {
  const child = spawn(command, args, options)
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** Ends a child: `signal`, then SIGKILL if it has not exited within `timeoutMs`. */
export async function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals,
  timeoutMs: number,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

/** A pino log line. */
export interface LogLine {
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

export interface ChildProgramSettings {
  /** How errors name it: `hajri-agent`, `hajri-cloud`. */
  name: string
  /** Node's arguments: `--import tsx` and the entry point with its own. */
  args: readonly string[]
  /** Added to this process's environment. */
  env: Record<string, string>
  /** Where every run's output is appended. */
  logPath: string
}

/** What one run reports back while it runs. */
export interface RunHooks {
  /** Every JSON log line. */
  onLogLine?: (line: LogLine) => void
  /** The run has ended, asked to or not. */
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void
}

export class ChildProgram {
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  private expectingExit = false
  /** Set by dispose(): a test that timed out may still be running its loop, and must not spawn more. */
  private disposed = false
  private lastLines: string[] = []
  private readonly logFile: WriteStream
  /** Processes started so far. */
  runs = 0
  /** Exits nobody asked for: a crash. */
  readonly unexpectedExits: UnexpectedExit[] = []
  /** Log lines of level error or fatal, with the run they came from. */
  readonly errors: (LogLine & { run: number })[] = []

  constructor(private readonly settings: ChildProgramSettings) {
    this.logFile = createWriteStream(settings.logPath, { flags: 'a' })
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  /** The current run's last lines of output, for an error message. */
  protected get tail(): string {
    return this.lastLines.join('\n')
  }

  /** The current run's process, if one was started. */
  protected get current(): ChildProcess | undefined {
    return this.child
  }

  /** Starts a run; returns its number. */
  protected startRun(hooks: RunHooks = {}): number {
    const { name } = this.settings
    if (this.disposed) throw new Error(`${name} was disposed of`)
    if (this.alive) throw new Error(`${name} is already running`)
    const run = ++this.runs
    this.expectingExit = false
    this.lastLines = []
    const child = spawnTracked(process.execPath, this.settings.args, {
      cwd: REPO_ROOT,
      env: { ...process.env, ...this.settings.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child = child
    this.logFile.write(`--- run ${run}, pid ${child.pid} ---\n`)

    const keep = (line: string) => {
      this.logFile.write(`${line}\n`)
      this.lastLines.push(line)
      if (this.lastLines.length > 40) this.lastLines.shift()
    }
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      keep(line)
      let parsed: LogLine | undefined
      try {
        parsed = JSON.parse(line) as LogLine
      } catch {
        return
      }
      if (typeof parsed.level === 'number' && parsed.level >= ERROR) this.errors.push({ ...parsed, run })
      hooks.onLogLine?.(parsed)
    })
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) =>
      keep(`stderr: ${line}`),
    )
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.expectingExit) this.unexpectedExits.push({ run, code, signal, tail: [...this.lastLines] })
        hooks.onExit?.(code, signal)
        resolve()
      })
    })
    return run
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

  /** SIGKILL, and waits until the process is gone: whatever was in progress stops there. */
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
