import type { ChildProcess } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AgentStatus } from '../../agent/status/agent-status.js'
import { REPO_ROOT, spawnTracked, stopChild } from '../support/child-program.js'
import { httpGet } from './http-get.js'

const STARTUP_TIMEOUT_MS = 60_000
// The agent lets punches being stored get their PUBACK and drains the spool before it exits.
const STOP_TIMEOUT_MS = 20_000

export interface AgentProcessOptions {
  configPath: string
  /** The agent compiled by compileAgent(); by default the sources, through tsx. */
  compiledEntry?: string | undefined
  /** Node flags before the script (by default the service unit's: agent-bench-settings.ts). */
  nodeFlags?: readonly string[]
  statusPort: number
  /** The agent's stdout and stderr (pino JSON lines) go here, to be shown if it fails. */
  logFile: string
  /** Run under --cpu-prof, writing profiles here (timings are then perturbed). */
  profileDirectory?: string | undefined
  /** Resolves once the agent is up: by default, when GET /status answers. */
  ready?: (status: AgentStatus) => boolean
}

/**
 * hajri-agent as an operator runs it (`hajri-agent run --config agent.yaml`), compiled or through
 * tsx from the sources, in a child process of its own: the benchmark's load generator and pollers
 * then cannot slow it down on its event loop, and /proc tells its CPU and memory apart from ours.
 */
export class AgentProcess {
  private readonly agent = new http.Agent({ keepAlive: false })
  /** performance.now() when it was first ready. */
  readyAt = Number.NaN

  private constructor(
    private readonly child: ChildProcess,
    readonly statusUrl: string,
    private readonly logFile: string,
    /** performance.now() when the process was spawned. */
    readonly spawnedAt: number,
  ) {}

  get pid(): number {
    return this.child.pid as number
  }

  static async start(options: AgentProcessOptions): Promise<AgentProcess> {
    const nodeArgs = [...(options.nodeFlags ?? []), ...(options.compiledEntry ? [] : ['--import', 'tsx'])]
    if (options.profileDirectory) {
      mkdirSync(options.profileDirectory, { recursive: true })
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${options.profileDirectory}`)
    }
    const log = openSync(options.logFile, 'a')
    const spawnedAt = performance.now()
    let child: ChildProcess
    try {
      child = spawnTracked(
        process.execPath,
        [...nodeArgs, options.compiledEntry ?? 'agent/main.ts', 'run', '--config', options.configPath],
        { cwd: REPO_ROOT, stdio: ['ignore', log, log] },
      )
    } finally {
      closeSync(log)
    }
    const statusUrl = `http://127.0.0.1:${options.statusPort}/status`
    const agent = new AgentProcess(child, statusUrl, options.logFile, spawnedAt)
    const ready = options.ready ?? (() => true)
    try {
      const deadline = Date.now() + STARTUP_TIMEOUT_MS
      for (;;) {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(
            `the agent exited while starting (code ${child.exitCode}, signal ${child.signalCode})`,
          )
        const status = await agent.status().catch(() => undefined)
        if (status && ready(status)) break
        if (Date.now() > deadline) throw new Error(`the agent was not ready within ${STARTUP_TIMEOUT_MS} ms`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    } catch (err) {
      await stopChild(child, 'SIGKILL', STOP_TIMEOUT_MS)
      throw new Error(`${(err as Error).message}; its log ends:\n${agent.logTail()}`)
    }
    agent.readyAt = performance.now()
    return agent
  }

  /** GET /status, as `hajri-agent status --json` reads it. */
  async status(): Promise<AgentStatus> {
    const response = await httpGet(this.agent, this.statusUrl, {})
    if (response.status !== 200) throw new Error(`GET /status answered ${response.status}: ${response.body}`)
    return JSON.parse(response.body) as AgentStatus
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null
  }

  /** The last lines the agent logged, for a problem report. */
  logTail(lines = 15): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } catch {
      return '(no log)'
    }
  }

  /** Log lines at warn or above (pino levels 40+), counted, for the notes. */
  warnings(): { count: number; first: string | undefined } {
    let text = ''
    try {
      text = readFileSync(this.logFile, 'utf8')
    } catch {
      return { count: 0, first: undefined }
    }
    const lines = text.split('\n').filter((line) => /"level":(4|5|6)\d/.test(line))
    return { count: lines.length, first: lines[0]?.slice(0, 400) }
  }

  /**
   * SIGTERM, as systemd stops it: the agent closes its inputs and spool and exits by itself, which
   * is also when --cpu-prof writes the profile. SIGKILL if it does not.
   */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    await stopChild(this.child, 'SIGTERM', STOP_TIMEOUT_MS)
    this.agent.destroy()
    return { code: this.child.exitCode, signal: this.child.signalCode }
  }
}
