/**
 * hajri-agent as a real child process, `node --import tsx agent/main.ts run --config FILE`, the way
 * a service manager runs it, so that it can be killed (SIGKILL) at random
 * points (docs/decisions/0024-ack-after-fsync.md). Each start is a new process on the same configuration,
 * spool directory and ports, as after `Restart=always` (deploy/). Its JSON log lines go to a file, and those
 * of level error and above are kept, so a test can report what the agent said about the moments it was
 * killed.
 */
import { writeFile } from 'node:fs/promises'
import { ChildProgram } from './child-program.js'

export class AgentProcess extends ChildProgram {
  constructor(options: {
    configPath: string
    /** Added to this process's environment (secrets for `${...}` in the configuration). */
    env: Record<string, string>
    /** Where every run's output is appended. */
    logPath: string
  }) {
    super({
      name: 'hajri-agent',
      args: ['--import', 'tsx', 'agent/main.ts', 'run', '--config', options.configPath],
      env: options.env,
      logPath: options.logPath,
    })
  }

  /**
   * Starts a process; `running` settles when it logs "hajri-agent running" (every input listening),
   * or rejects if it exits first. The promise is already handled, so a process killed while starting
   * leaves no unhandled rejection. A crash (an uncaught error ends the process, run-command.ts) is
   * among the unexpected exits.
   */
  spawn(): { running: Promise<void> } {
    let markRunning: () => void = () => {}
    let failStart: (err: Error) => void = () => {}
    const running = new Promise<void>((resolve, reject) => {
      markRunning = resolve
      failStart = reject
    })
    running.catch(() => {})
    const run = this.startRun({
      onLogLine: (line) => {
        if (line.msg === 'hajri-agent running') markRunning()
      },
      onExit: (code, signal) =>
        failStart(
          new Error(
            `hajri-agent (run ${run}) exited (code ${code}, signal ${signal}) before it was running:\n${this.tail}`,
          ),
        ),
    })
    return { running }
  }

  /** Starts a process and waits until it is running. */
  async start(timeoutMs = 30_000): Promise<void> {
    const { running } = this.spawn()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`hajri-agent not running after ${timeoutMs} ms:\n${this.tail}`)),
        timeoutMs,
      )
    })
    try {
      await Promise.race([running, timeout])
    } finally {
      clearTimeout(timer)
    }
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
