import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

interface ChildExit {
  code: number | null
  signal: NodeJS.Signals | null
}

interface DemoChildOptions {
  /** For messages: `the agent`, `the simulated device`. */
  name: string
  execPath: string
  args: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  /** Every line the child writes, with the stream it came on. */
  onLine: (line: string, stream: 'stdout' | 'stderr') => void
}

/** How many of a child's last lines are kept, to say why it stopped. */
const TAIL_LINES = 20

/**
 * One child process of the demo (the agent, the simulated device). It stays in the demo's process
 * group, so Ctrl-C in a terminal reaches it as well as the demo; `stop` covers the other ways the
 * demo is stopped (SIGTERM to the demo alone, a failure): SIGTERM, then SIGKILL if it hangs.
 */
export class DemoChild {
  private child: ChildProcess | undefined
  private exit: ChildExit | undefined
  readonly tail: string[] = []
  /** Settles once the child has exited and its output is read to the end. */
  readonly exited: Promise<ChildExit>
  private markExited: (exit: ChildExit) => void = () => {}

  constructor(private readonly options: DemoChildOptions) {
    this.exited = new Promise((resolve) => {
      this.markExited = resolve
    })
  }

  get name(): string {
    return this.options.name
  }

  get running(): boolean {
    return this.child !== undefined && this.exit === undefined
  }

  start(): void {
    const { execPath, args, cwd, env, onLine } = this.options
    const child = spawn(execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child = child
    const read = (stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr') =>
      createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
        this.tail.push(line)
        if (this.tail.length > TAIL_LINES) this.tail.shift()
        onLine(line, name)
      })
    read(child.stdout as NodeJS.ReadableStream, 'stdout')
    read(child.stderr as NodeJS.ReadableStream, 'stderr')
    const settle = (exit: ChildExit) => {
      if (this.exit) return
      this.exit = exit
      this.markExited(exit)
    }
    // 'close' comes after 'exit' and the end of its output, so the tail is complete.
    child.once('close', (code, signal) => settle({ code, signal }))
    child.once('error', (err) => {
      this.tail.push(`could not start: ${err.message}`)
      settle({ code: null, signal: null })
    })
  }

  /** Asks the child to stop (SIGTERM) and waits; after `graceMs`, kills it. Resolves when it is gone. */
  async stop(graceMs: number): Promise<ChildExit | undefined> {
    const child = this.child
    if (!child || this.exit) return this.exit
    child.kill('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        child.kill('SIGKILL')
        resolve()
      }, graceMs)
    })
    await Promise.race([this.exited, killed])
    clearTimeout(timer)
    return this.exited
  }

  /** For a second Ctrl-C: no waiting. */
  kill(): void {
    if (this.running) this.child?.kill('SIGKILL')
  }
}

/** `exit code 1`, `signal SIGKILL`. */
export function describeExit(exit: ChildExit): string {
  if (exit.signal) return `signal ${exit.signal}`
  return exit.code === null ? 'could not be started' : `exit code ${exit.code}`
}
