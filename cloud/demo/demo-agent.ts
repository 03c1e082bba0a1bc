import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isLoopbackHost } from '../../shared/loopback-host.js'

/** The demo's one device: an MQTT terminal at the factory gate, publishing JSON punches. */
const DEMO_DEVICE_ID = 'demo-gate'
export const DEMO_PUNCH_TOPIC = `punches/${DEMO_DEVICE_ID}`
const AGENT_CONFIG_FILE = 'agent.yaml'
const CLIENT_SECRET_FILE = 'client-secret'

interface DemoAgentFiles {
  /** Where the agent's cloud is: the demo's own. */
  cloudUrl: string
  clientId: string
  clientSecret: string
  mqttPort: number
  statusPort: number
}

/** How to run hajri-agent: node, and what comes before the agent's own arguments. */
export interface AgentEntry {
  execPath: string
  /** `[<dist>/agent/main.js]`, or `[--import, tsx, <repo>/agent/main.ts]` when the cloud runs from source. */
  prefix: string[]
  /** The entry file, for the commands the banner prints. */
  main: string
}

/**
 * hajri-agent beside this compiled file: `dist/cloud/demo/` → `dist/agent/main.js`. The cloud runs
 * the agent as a program and never imports its code: the two sides share only shared/
 * (docs/decisions/0001-one-package-two-programs.md). Run from source (tsx, tests), this file is a .ts and so
 * is the agent's entry.
 */
export function agentEntry(moduleUrl: string = import.meta.url): AgentEntry {
  const fromSource = moduleUrl.endsWith('.ts')
  const main = fileURLToPath(new URL(`../../agent/main.${fromSource ? 'ts' : 'js'}`, moduleUrl))
  return { execPath: process.execPath, prefix: fromSource ? ['--import', 'tsx', main] : [main], main }
}

/** The command line a person types in the working directory: `node dist/agent/main.js ...`. */
export function shownCommand(entry: AgentEntry, args: readonly string[], cwd: string): string {
  const rel = relative(cwd, entry.main)
  const main = rel.startsWith('..') || isAbsolute(rel) ? entry.main : rel
  const prefix = entry.prefix.length > 1 ? [...entry.prefix.slice(0, -1), main] : [main]
  return ['node', ...prefix, ...args].join(' ')
}

/** `hajri-agent simulate` arguments for one device publishing to the demo's broker. */
export function simulateArgs(mqttPort: number, employees: readonly string[], every?: string): string[] {
  const args = [
    'simulate',
    '--mqtt',
    `mqtt://127.0.0.1:${mqttPort}`,
    '--topic',
    DEMO_PUNCH_TOPIC,
    '--employees',
    employees.join(','),
  ]
  return every === undefined ? args : [...args, '--every', every]
}

/**
 * The agent's configuration (docs/decisions/0023-agent-yaml-configuration.md; see deploy/agent.example.yaml),
 * rewritten at every start because the ports and the cloud's address may change between runs. The secret is
 * in a file of its own, readable only by this user, as a real site keeps it. JSON strings are YAML strings.
 */
function agentConfigYaml(files: DemoAgentFiles): string {
  const q = JSON.stringify
  // The demo's cloud is plain http on this machine. Reached at a LAN address (HAJRI_HOST), the
  // secret would cross the network in clear, which the agent refuses unless told: the demo says so.
  const insecure = isLoopbackHost(new URL(files.cloudUrl).hostname) ? '' : '\n  allowInsecure: true'
  return `# Written by \`npm start\` (hajri-cloud demo) at every start: edits here are overwritten.
# Every setting is explained in deploy/agent.example.yaml.
site: { id: demo-factory, timezone: Asia/Kolkata }
cloud:
  url: ${q(files.cloudUrl)}
  clientId: ${q(files.clientId)}
  clientSecretFile: ${CLIENT_SECRET_FILE}${insecure}
spool: { dir: spool }
status: { listen: ${q(`127.0.0.1:${files.statusPort}`)} }
# JSON lines: the demo reads them and shows warnings and errors.
log: { level: info, pretty: false }
mqtt:
  # Loopback only, so no MQTT users: nothing but this machine can reach the broker. A site whose
  # devices connect over the network lists a user for each (deploy/agent.example.yaml).
  embedded: { host: 127.0.0.1, port: ${files.mqttPort} }
devices:
  - id: ${DEMO_DEVICE_ID}
    mqtt: { topic: ${DEMO_PUNCH_TOPIC}, format: json }
`
}

/** Writes agent.yaml and the client secret (0600) into `agentDir`; returns the configuration's path. */
export async function writeAgentFiles(agentDir: string, files: DemoAgentFiles): Promise<string> {
  await mkdir(agentDir, { recursive: true, mode: 0o700 })
  const secretFile = join(agentDir, CLIENT_SECRET_FILE)
  await writeFile(secretFile, `${files.clientSecret}\n`, { mode: 0o600 })
  // writeFile's mode applies only to a new file, and through the umask.
  await chmod(secretFile, 0o600)
  const configFile = join(agentDir, AGENT_CONFIG_FILE)
  await writeFile(configFile, agentConfigYaml(files))
  return configFile
}
