import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** What a server entry point (test/bench/servers/*.ts) sends its parent over IPC. */
export type ServerMessage = { type: 'listening'; url: string } | { type: 'failed'; error: string }

export interface ServerProcessOptions {
  /** The entry point, relative to test/bench/servers/, e.g. `bare-server.ts`. */
  entry: string
  args?: string[]
  /**
   * Write V8 CPU profiles of the server into this directory (one per thread: tsx's module hooks
   * run on a thread of their own, so the name is left to Node, which puts the thread id in it).
   */
  profileDirectory?: string
  /** Send the server's stdout to /dev/null (a server that logs there, as `serve` does). */
  discardStdout?: boolean
}

const STARTUP_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 15_000

/**
 * A server under test in its own process: the load generator then has the parent's event loop to
 * itself and cannot slow the server down, or be slowed down by it, on the same thread.
 */
export class ServerProcess {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  /** The server's process id, for /proc (agent-proc-stats.ts). */
  get pid(): number {
    return this.child.pid as number
  }

  static async start(options: ServerProcessOptions): Promise<ServerProcess> {
    const entry = fileURLToPath(new URL(`./servers/${options.entry}`, import.meta.url))
    const nodeArgs = ['--import', 'tsx']
    if (options.profileDirectory) {
      mkdirSync(options.profileDirectory, { recursive: true })
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.profileDirectory}`)
    }
    const child = spawn(process.execPath, [...nodeArgs, entry, ...(options.args ?? [])], {
      stdio: ['ignore', options.discardStdout ? 'ignore' : 'inherit', 'inherit', 'ipc'],
    })
    const listening = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${options.entry} did not listen within ${STARTUP_TIMEOUT_MS} ms`)),
        STARTUP_TIMEOUT_MS,
      )
      child.on('message', (message: ServerMessage) => {
        clearTimeout(timer)
        if (message.type === 'listening') resolve(message.url)
        else reject(new Error(`${options.entry} failed to start: ${message.error}`))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`${options.entry} exited before listening (code ${code}, signal ${signal})`))
      })
      child.once('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
    })
    try {
      return new ServerProcess(await listening, child)
    } catch (err) {
      child.kill('SIGKILL')
      throw err
    }
  }

  /**
   * Asks the server to close and exit by itself (a V8 CPU profile is only written on a normal
   * exit); kills it if it does not.
   */
  async stop(): Promise<void> {
    const child = this.child
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = once(child, 'exit')
    child.send({ type: 'stop' })
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    try {
      await exited
    } finally {
      clearTimeout(timer)
    }
  }
}
