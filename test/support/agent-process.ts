/**
 * hajri-agent as a real child process, `node --import tsx agent/main.ts run --config FILE`, the way
 * a service manager runs it, so that it can be killed (SIGKILL) at random
 * points (docs/decisions/0024-ack-after-fsync.md). Each start is a new process on the same configuration,
 * spool directory and ports, as after `Restart=always` (deploy/). Its JSON log lines go to a file, and those
 * of level error and above are kept, so a test can report what the agent said about the moments it was
 * killed.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, type WriteStream } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../', import.meta.url))

/** Every agent child alive in this process, killed on exit whatever happened to the test. */
const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

export interface AgentLogLine {
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

export class AgentProcess {
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  private expectingExit = false
  /** Set by dispose(): a test that timed out may still be running its loop, and must not spawn more. */
  private disposed = false
  private tail: string[] = []
  private readonly logFile: WriteStream
  /** Processes started so far. */
  runs = 0
  /** Exits nobody asked for: a crash (an uncaught error ends the process, run-command.ts). */
  readonly unexpectedExits: UnexpectedExit[] = []
  /** Log lines of level error or fatal, with the run they came from. */
  readonly errors: (AgentLogLine & { run: number })[] = []

  constructor(
    private readonly options: {
      configPath: string
      /** Added to this process's environment (secrets for `${...}` in the configuration). */
      env: Record<string, string>
      /** Where every run's output is appended. */
      logPath: string
    },
  ) {
    this.logFile = createWriteStream(options.logPath, { flags: 'a' })
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  get alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  /**
   * Starts a process; `running` settles when it logs "hajri-agent running" (every input listening),
   * or rejects if it exits first. The promise is already handled, so a process killed while starting
   * leaves no unhandled rejection.
   */
  spawn(): { running: Promise<void> } {
    if (this.disposed) throw new Error('the agent was disposed of')
    if (this.alive) throw new Error('the agent is already running')
    const run = ++this.runs
    this.expectingExit = false
    this.tail = []
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'agent/main.ts', 'run', '--config', this.options.configPath],
      {
        cwd: REPO,
        env: { ...process.env, ...this.options.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.add(child)
    this.child = child
    this.logFile.write(`--- run ${run}, pid ${child.pid} ---\n`)

    let markRunning: () => void = () => {}
    let failStart: (err: Error) => void = () => {}
    const running = new Promise<void>((resolve, reject) => {
      markRunning = resolve
      failStart = reject
    })
    running.catch(() => {})

    const keep = (line: string) => {
      this.logFile.write(`${line}\n`)
      this.tail.push(line)
      if (this.tail.length > 40) this.tail.shift()
    }
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      keep(line)
      let parsed: AgentLogLine | undefined
      try {
        parsed = JSON.parse(line) as AgentLogLine
      } catch {
        return
      }
      if (parsed.msg === 'hajri-agent running') markRunning()
      if (typeof parsed.level === 'number' && parsed.level >= ERROR) this.errors.push({ ...parsed, run })
    })
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) =>
      keep(`stderr: ${line}`),
    )

    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        children.delete(child)
        if (!this.expectingExit) this.unexpectedExits.push({ run, code, signal, tail: [...this.tail] })
        failStart(
          new Error(
            `hajri-agent (run ${run}) exited (code ${code}, signal ${signal}) before it was running:\n${this.tail.join('\n')}`,
          ),
        )
        resolve()
      })
    })
    return { running }
  }

  /** Starts a process and waits until it is running. */
  async start(timeoutMs = 30_000): Promise<void> {
    const { running } = this.spawn()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`hajri-agent not running after ${timeoutMs} ms:\n${this.tail.join('\n')}`)),
        timeoutMs,
      )
    })
    try {
      await Promise.race([running, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** SIGKILL: no handler runs, nothing is flushed or closed; whatever was in progress stops there. */
  async kill(): Promise<void> {
    const child = this.child
    if (!child || !this.alive) return
    this.expectingExit = true
    child.kill('SIGKILL')
    await this.exited
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

/** YAML block style throughout: a flow mapping (`{ a: ${X} }`) would not survive `${...}` text. */
export interface AgentYaml {
  siteId: string
  cloudUrl: string
  clientId: string
  /** The name of the environment variable holding the client secret. */
  clientSecretEnv: string
  spoolDir: string
  chunkPunches: number
  concurrency: number
  timeoutSeconds: number
  statusPort: number
  mqtt?: { port: number; username: string; passwordEnv: string; topic: string; deviceId: string }
  serial?: { path: string; deviceId: string }
  /**
   * The ADMS (iclock push) listener on 127.0.0.1:`port` and a push terminal device. Delay and
   * ErrorDelay are the least the schema allows, 1 s each: the agent hands them to its terminals in
   * the handshake, so a terminal played at firmware speed (AdmsDevice timeScale 1) polls every
   * second and, after the agent is killed, posts its batch again a second later, as real firmware
   * against an agent configured so would.
   */
  adms?: {
    port: number
    deviceId: string
    serialNumber: string
    /** More terminals on the same listener, each a device of its own. */
    moreTerminals?: readonly { deviceId: string; serialNumber: string }[]
    /** Default 1. */
    pollSeconds?: number
    /** Default 1. */
    errorDelaySeconds?: number
  }
}

export async function writeAgentConfig(path: string, c: AgentYaml): Promise<void> {
  const q = (value: string) => JSON.stringify(value) // a JSON string is a YAML double-quoted scalar
  const lines = [
    'site:',
    `  id: ${q(c.siteId)}`,
    '  timezone: Asia/Kolkata',
    'cloud:',
    `  url: ${q(c.cloudUrl)}`,
    `  clientId: ${q(c.clientId)}`,
    `  clientSecret: \${${c.clientSecretEnv}}`,
    `  concurrency: ${c.concurrency}`,
    `  timeoutSeconds: ${c.timeoutSeconds}`,
    'spool:',
    `  dir: ${q(c.spoolDir)}`,
    `  chunkPunches: ${c.chunkPunches}`,
    'status:',
    `  listen: 127.0.0.1:${c.statusPort}`,
    'log:',
    '  level: info',
    '  pretty: false',
  ]
  if (c.mqtt) {
    lines.push(
      'mqtt:',
      '  embedded:',
      '    host: 127.0.0.1',
      `    port: ${c.mqtt.port}`,
      '    users:',
      `      - username: ${q(c.mqtt.username)}`,
      `        password: \${${c.mqtt.passwordEnv}}`,
    )
  }
  if (c.adms) {
    lines.push(
      'adms:',
      `  listen: 127.0.0.1:${c.adms.port}`,
      `  pollSeconds: ${c.adms.pollSeconds ?? 1}`,
      `  errorDelaySeconds: ${c.adms.errorDelaySeconds ?? 1}`,
    )
  }
  lines.push('devices:')
  if (c.mqtt) {
    lines.push(
      `  - id: ${q(c.mqtt.deviceId)}`,
      '    mqtt:',
      `      topic: ${q(c.mqtt.topic)}`,
      '      format: json',
      `      username: ${q(c.mqtt.username)}`,
    )
  }
  if (c.serial) {
    lines.push(
      `  - id: ${q(c.serial.deviceId)}`,
      '    serial:',
      `      path: ${q(c.serial.path)}`,
      '      baudRate: 115200',
      '      framing:',
      '        type: line',
      '      format: zk-attlog',
    )
  }
  if (c.adms) {
    for (const terminal of [c.adms, ...(c.adms.moreTerminals ?? [])]) {
      lines.push(
        `  - id: ${q(terminal.deviceId)}`,
        '    adms:',
        `      serialNumber: ${q(terminal.serialNumber)}`,
      )
    }
  }
  await writeFile(path, `${lines.join('\n')}\n`)
}
