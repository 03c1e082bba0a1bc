import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import type { Actor } from '../auth/actor.js'
import type { CloudConfig } from '../config.js'
import { type RunningServer, startServer } from '../server.js'
import { ConfigError } from '../settings/config-error.js'
import { AgentActivity } from './demo-activity.js'
import {
  type AgentEntry,
  agentEntry,
  DEMO_PUNCH_TOPIC,
  shownCommand,
  simulateArgs,
  writeAgentFiles,
} from './demo-agent.js'
import { AGENT_RUNNING, isWorthShowing, parseAgentLogLine } from './demo-agent-log.js'
import { demoBanner } from './demo-banner.js'
import { DemoChild, describeExit } from './demo-child.js'
import { type DemoCredentials, readDemoCredentials, writeDemoCredentials } from './demo-credentials.js'
import { SIMULATED_EMPLOYEES } from './demo-employees.js'
import { assertPortsFree, portTakenMessage } from './demo-ports.js'
import { seedDemo } from './demo-seed.js'
import { type DemoSettings, showPath } from './demo-settings.js'

/** The employee the printed punch command names: one the simulated device leaves alone. */
const PUNCH_EMPLOYEE = 'E004'
/** Generous: a loaded machine may take long to start node and open the spool; this only bounds a hang. */
const AGENT_START_TIMEOUT_MS = 120_000
/** The agent finishes the request in flight and closes its spool; what is unsent stays on disk. */
const AGENT_STOP_GRACE_MS = 60_000
const SIMULATOR_STOP_GRACE_MS = 10_000
const ACTIVITY_INTERVAL_MS = 5_000

interface DemoRunnerOptions {
  config: CloudConfig
  settings: DemoSettings
  env: NodeJS.ProcessEnv
  cwd: string
  /** The cloud's logger (warnings and errors by default: the banner must stay readable). */
  log: FastifyBaseLogger
  actor: Actor
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** A child stopped though nobody asked it to: the caller stops the demo with a failure. */
  onChildExit: (message: string) => void
  /** Where the demo's compiled files are; hajri-agent and the CLI are found from there. */
  moduleUrl?: string
}

/** Thrown by `start` when `stop` was called meanwhile. */
export class DemoStopped extends Error {
  constructor() {
    super('the demo was stopped while starting')
  }
}

/**
 * `npm start` (docs/decisions/0059-npm-start-is-a-demo.md): the cloud in this process, seeded with a demo
 * tenant; a hajri-agent with its embedded broker, and a simulated device publishing to it, as child
 * processes. `stop` undoes `start` in reverse, from whatever point `start` had reached.
 */
export class DemoRunner {
  private server: RunningServer | undefined
  private agent: DemoChild | undefined
  private simulator: DemoChild | undefined
  private activity: AgentActivity | undefined
  private starting: Promise<void> | undefined
  private stopping: Promise<void> | undefined
  private stopRequested = false
  private markStopRequested: () => void = () => {}
  private readonly stopRequestedSignal = new Promise<void>((resolve) => {
    this.markStopRequested = resolve
  })
  private readonly entry: AgentEntry

  constructor(private readonly options: DemoRunnerOptions) {
    this.entry = agentEntry(options.moduleUrl)
  }

  start(): Promise<void> {
    this.starting ??= this.run()
    return this.starting
  }

  /** Stops the simulated device, then the agent, then the cloud; resolves when all are down. */
  stop(): Promise<void> {
    this.stopRequested = true
    this.markStopRequested()
    this.stopping ??= (async () => {
      await this.starting?.catch(() => {})
      this.activity?.stop()
      await this.simulator?.stop(SIMULATOR_STOP_GRACE_MS)
      await this.agent?.stop(AGENT_STOP_GRACE_MS)
      await this.server?.stop()
    })()
    return this.stopping
  }

  /** For a second Ctrl-C: the children are killed at once (the agent's spool is safe: it fsyncs). */
  kill(): void {
    this.simulator?.kill()
    this.agent?.kill()
  }

  private checkStop(): void {
    if (this.stopRequested) throw new DemoStopped()
  }

  private async run(): Promise<void> {
    const { config, settings, stdout, stderr } = this.options
    // Before anything starts: a taken port is the commonest reason a demo cannot start.
    await assertPortsFree([
      { port: settings.mqttPort, variable: 'HAJRI_DEMO_MQTT_PORT' },
      { port: settings.statusPort, variable: 'HAJRI_DEMO_STATUS_PORT' },
    ])
    this.server = await startServer(config, this.options.log)
    this.checkStop()
    const app = this.server.app
    const cloudUrl = reachableUrl(config.host, (app.server.address() as AddressInfo).port)

    const credentialsFile = settings.credentialsFile
    const save = (credentials: DemoCredentials) => writeDemoCredentials(credentialsFile, credentials)
    const previous = await readDemoCredentials(credentialsFile, (reason) =>
      stderr(`demo: ${credentialsFile} is ${reason}; looking for the demo tenant by its owner\n`),
    )
    const seed = await seedDemo(previous, {
      services: app.services,
      db: app.database.db,
      actor: this.options.actor,
      save,
    })
    if (seed.done.length > 0) stdout(`demo: ${seed.done.join(', ')}\n`)

    const mqttUrl = `mqtt://127.0.0.1:${settings.mqttPort}`
    const statusUrl = `http://127.0.0.1:${settings.statusPort}`
    const credentials: DemoCredentials = {
      ...seed.credentials,
      urls: {
        console: `${cloudUrl}/console/`,
        api: `${cloudUrl}/api/public/v1`,
        docs: `${cloudUrl}/docs`,
        mqtt: mqttUrl,
        punchTopic: DEMO_PUNCH_TOPIC,
        agentStatus: statusUrl,
      },
    }
    await save(credentials)
    this.checkStop()

    const configFile = await writeAgentFiles(settings.agentDir, {
      cloudUrl,
      clientId: seed.credentials.agent.clientId,
      clientSecret: seed.credentials.agent.clientSecret,
      mqttPort: settings.mqttPort,
      statusPort: settings.statusPort,
    })
    await this.startAgent(configFile)
    this.startSimulator()

    const command = (args: string[]) => shownCommand(this.entry, args, this.options.cwd)
    stdout(
      demoBanner({
        dataDir: settings.dataDirShown,
        credentialsFile: showPath(credentialsFile, this.options.cwd).replace(/^\.[/\\]/, ''),
        cloudUrl,
        ownerEmail: credentials.owner.email,
        owner: seed.owner,
        resetPasswordCommand: this.resetPasswordCommand(credentials),
        apiKey: seed.credentials.apiKey.key,
        punchCommand: command(simulateArgs(settings.mqttPort, [PUNCH_EMPLOYEE])),
        simulated: { employees: SIMULATED_EMPLOYEES, every: settings.punchEvery },
      }),
    )
    this.activity = new AgentActivity({
      statusUrl,
      intervalMs: ACTIVITY_INTERVAL_MS,
      say: (text) => stdout(`${text}\n`),
      deadLettersCommand: command(['dead-letters', 'list', '--url', statusUrl]),
    })
    this.activity.start()
  }

  /** Starts hajri-agent and waits until it listens and forwards ("hajri-agent running"). */
  private async startAgent(configFile: string): Promise<void> {
    const { settings, stderr } = this.options
    let markRunning: () => void = () => {}
    const running = new Promise<void>((resolve) => {
      markRunning = resolve
    })
    let portTaken: string | undefined
    const agent = new DemoChild({
      name: 'the agent',
      execPath: this.entry.execPath,
      args: [...this.entry.prefix, 'run', '--config', configFile],
      cwd: this.options.cwd,
      env: this.options.env,
      onLine: (line) => {
        const parsed = parseAgentLogLine(line)
        if (!parsed) {
          stderr(`agent: ${line}\n`)
          return
        }
        if (parsed.msg === AGENT_RUNNING) markRunning()
        if (parsed.err?.code === 'EADDRINUSE') {
          if (parsed.err.port === settings.mqttPort) portTaken = 'HAJRI_DEMO_MQTT_PORT'
          if (parsed.err.port === settings.statusPort) portTaken = 'HAJRI_DEMO_STATUS_PORT'
        }
        if (isWorthShowing(parsed)) stderr(`agent: ${parsed.text}\n`)
      },
    })
    this.agent = agent
    agent.start()
    let timer: NodeJS.Timeout | undefined
    const outcome = await Promise.race([
      running.then(() => 'running' as const),
      agent.exited.then(() => 'exited' as const),
      this.stopRequestedSignal.then(() => 'stopped' as const),
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), AGENT_START_TIMEOUT_MS)
      }),
    ])
    clearTimeout(timer)
    if (outcome === 'stopped') throw new DemoStopped()
    if (outcome === 'timeout') {
      throw new Error(`the agent did not start within ${AGENT_START_TIMEOUT_MS / 1000} s`)
    }
    if (outcome === 'exited') {
      const exit = await agent.exited
      if (portTaken) {
        const port = portTaken === 'HAJRI_DEMO_MQTT_PORT' ? settings.mqttPort : settings.statusPort
        throw new ConfigError([portTakenMessage(portTaken, port)])
      }
      throw new Error(`the agent could not start (${describeExit(exit)}); its messages are above`)
    }
    this.watch(agent)
  }

  private startSimulator(): void {
    const { settings, stderr } = this.options
    const simulator = new DemoChild({
      name: 'the simulated device',
      execPath: this.entry.execPath,
      args: [
        ...this.entry.prefix,
        ...simulateArgs(settings.mqttPort, SIMULATED_EMPLOYEES, settings.punchEvery),
        '--json',
      ],
      cwd: this.options.cwd,
      env: this.options.env,
      onLine: (line, stream) => {
        // While stopping, its complaints are about the agent going away: expected.
        if (this.stopRequested) return
        const text = simulatorLine(line, stream)
        if (text) stderr(`simulated device: ${text}\n`)
      },
    })
    this.simulator = simulator
    simulator.start()
    this.watch(simulator)
  }

  /** A child that exits while the demo runs takes the demo down: no half-demo. */
  private watch(child: DemoChild): void {
    child.exited.then(
      (exit) => {
        if (!this.stopRequested)
          this.options.onChildExit(`${child.name} stopped unexpectedly (${describeExit(exit)})`)
      },
      () => {},
    )
  }

  private resetPasswordCommand(credentials: DemoCredentials): string {
    const fromSource = this.entry.prefix.length > 1
    const cli = fileURLToPath(
      new URL(`../cli.${fromSource ? 'ts' : 'js'}`, this.options.moduleUrl ?? import.meta.url),
    )
    const shown = showPath(cli, this.options.cwd).replace(/^\.[/\\]/, '')
    const databaseUrl = this.options.env.HAJRI_DATABASE_URL
    // A PostgreSQL URL may carry a password: not printed; the reader has it in their environment.
    const prefix = databaseUrl?.startsWith('sqlite:') ? `HAJRI_DATABASE_URL=${databaseUrl} ` : ''
    return `${prefix}node ${fromSource ? '--import tsx ' : ''}${shown} user reset-password --tenant ${credentials.tenant.id} ${credentials.owner.email}`
  }
}

/**
 * What the demo shows of the simulated device: only its troubles. Its punches show as the agent's
 * forwards (AgentActivity), and its opening notice repeats what the banner says.
 */
export function simulatorLine(line: string, stream: 'stdout' | 'stderr'): string | undefined {
  if (stream === 'stderr') {
    const text = line.replace(/^hajri-agent simulate: /, '')
    return /Ctrl-C stops$/.test(text) ? undefined : text
  }
  try {
    const event = JSON.parse(line) as {
      event?: string
      acknowledged?: boolean
      employeeCode?: string
      error?: string
    }
    if (event.event === 'punch' && event.acknowledged === false)
      return `a punch of ${event.employeeCode} was not acknowledged: ${event.error ?? 'no answer'}`
    return undefined
  } catch {
    return line
  }
}

/** An address to print and to give the agent: a wildcard listen address is reached on loopback. */
export function reachableUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`
}
