/**
 * What the simulator tests stand on: a real agent Gateway, loaded from a YAML file the way
 * IT staff write one, with the real inputs (the embedded MQTT broker on a free port, serial ports
 * with the real bindings) and its spool in a temp directory. Its cloud is a port nothing listens on,
 * so every punch stays in the spool to be counted. Also: a socat pseudo-terminal pair, and
 * `hajri-agent` as a child process. Not a test file itself.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pino } from 'pino'
import { stringify } from 'yaml'
import { loadAgentConfig } from '../../../agent/config/load.js'
import { Gateway } from '../../../agent/gateway.js'
import { createInputs } from '../../../agent/inputs/create-inputs.js'
import { runAgentCli } from '../../../agent/main.js'
import type { DeadLetter, SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { parseTimestamp } from '../../../shared/time.js'
import { type RunningCli, startCli } from '../../support/cli-capture.js'
import { freePort } from '../../support/e2e-kit.js'
import { allDeadLetters } from '../spool/all-dead-letters.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

export interface SimulatorTestAgent {
  dir: string
  gateway: Gateway
  /** mqtt://127.0.0.1:PORT of the embedded broker, when the agent has one. */
  mqttUrl: string | undefined
  /** http://127.0.0.1:PORT of the ADMS listener, when the agent has one. */
  admsUrl: string | undefined
  /** http://127.0.0.1:PORT of the status listener. */
  statusUrl: string
  punches(): Promise<SpooledPunch[]>
  deadLettered(): Promise<DeadLetter[]>
  stop(): Promise<void>
}

export interface AgentSetup {
  /** The `devices` of agent.yaml. */
  devices: object[]
  /** With an embedded broker; its users' passwords are written to files of their own. */
  mqtt?: { users: { username: string; password: string }[] }
  /** With the ADMS listener (on a free port): more of its settings. */
  adms?: object
}

/** Starts a real Gateway (every input real), its spool and files in a new temp directory. */
export async function startSimulatorTestAgent(setup: AgentSetup): Promise<SimulatorTestAgent> {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-simulate-'))
  const users = []
  for (const user of setup.mqtt?.users ?? []) {
    const passwordFile = join(dir, `${user.username}.pass`)
    await writeFile(passwordFile, `${user.password}\n`, { mode: 0o600 })
    users.push({ username: user.username, passwordFile })
  }
  const port = setup.mqtt ? await freePort() : undefined
  const admsPort = setup.adms ? await freePort() : undefined
  const statusPort = await freePort()
  const doc = {
    site: { id: 'simulate-test', timezone: 'Asia/Kolkata' },
    // A port nothing listens on: forwarding fails (retried, nothing dead-lettered) and the spool keeps all.
    cloud: {
      url: `http://127.0.0.1:${await freePort()}`,
      clientId: 'hjc_test',
      clientSecret: 'cs-simulate-test',
    },
    spool: { dir: join(dir, 'spool') },
    status: { listen: `127.0.0.1:${statusPort}` },
    log: { level: 'silent' },
    ...(setup.mqtt ? { mqtt: { embedded: { host: '127.0.0.1', port, users } } } : {}),
    ...(setup.adms ? { adms: { ...setup.adms, listen: `127.0.0.1:${admsPort}` } } : {}),
    devices: setup.devices,
  }
  const configFile = join(dir, 'agent.yaml')
  await writeFile(configFile, stringify(doc))
  const config = await loadAgentConfig(configFile, {})
  const gateway = new Gateway(config, { log: pino({ level: 'silent' }), createInputs })
  try {
    await gateway.start()
  } catch (err) {
    await gateway.stop().catch(() => {})
    await rm(dir, { recursive: true, force: true })
    throw err
  }
  let stopped = false
  return {
    dir,
    gateway,
    mqttUrl: port === undefined ? undefined : `mqtt://127.0.0.1:${port}`,
    admsUrl: admsPort === undefined ? undefined : `http://127.0.0.1:${admsPort}`,
    statusUrl: `http://127.0.0.1:${statusPort}`,
    async punches() {
      const all: SpooledPunch[] = []
      for (const ref of gateway.spool.pending()) all.push(...(await gateway.spool.read(ref)))
      return all
    },
    deadLettered: () => allDeadLetters(gateway.deadLetters),
    async stop() {
      if (stopped) return
      stopped = true
      await gateway.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

export interface AgentRun {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** Children still running; a test's afterEach kills them (`killChildren`), whatever happened. */
const children = new Set<ChildProcess>()

/** `node --import tsx agent/main.ts ARGS`, with only PATH from this process's environment, and `env`. */
export function hajriAgent(args: string[], env: Record<string, string> = {}): AgentRun {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'agent/main.ts'), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const exited = once(child, 'exit').then(([code, signal]) => {
    children.delete(child)
    return { code: code as number | null, signal: signal as NodeJS.Signals | null }
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

export function killChildren(): void {
  for (const child of children) child.kill('SIGKILL')
  children.clear()
}

/** Polls until `condition` holds; gives up (fails) with `what` after a generous deadline. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, giveUpMs = 30_000) {
  const deadline = Date.now() + giveUpMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** The punch lines of `simulate --json` output. */
export function jsonPunchLines(
  stdout: string,
): { employeeCode: string; punchType: string; punchedAt: string; acknowledged: boolean }[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .filter((event) => event.event === 'punch')
}

/** `hajri-agent ARGS` in this process (runAgentCli), its output readable while it runs. */
export function cliInProcess(args: string[]): RunningCli {
  return startCli(runAgentCli, args, { env: {}, cwd: REPO_ROOT })
}

/** (employee, direction, instant) of spooled or printed punches, sorted, to compare the two. */
export function punchKeys(
  punches: { employeeCode: string; punchType: string; punchedAt: string }[],
): string[] {
  return punches.map((p) => `${p.employeeCode} ${p.punchType} ${parseTimestamp(p.punchedAt)}`).sort()
}
