import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { CloudConfig } from '../config.js'
import { ConfigError } from '../settings/config-error.js'
import { parseDatabaseUrl } from '../settings/database-url.js'
import { DEMO_CREDENTIALS_FILE } from './demo-credentials.js'

/** Where the demo keeps its files and which ports its agent takes. */
export interface DemoSettings {
  /** The directory of the SQLite database (./data by default); ./data with PostgreSQL. */
  dataDir: string
  /** `dataDir` as the user should read it: relative to the working directory when inside it. */
  dataDirShown: string
  credentialsFile: string
  /** The agent's configuration, client secret and spool. */
  agentDir: string
  /** The agent's embedded MQTT broker: not 1883, so that a site broker already there is left alone. */
  mqttPort: number
  /** The agent's status listener: not 9410, so that a real agent on this machine is left alone. */
  statusPort: number
  /** How often the simulated device punches (`hajri-agent simulate --every`). */
  punchEvery: string
}

const DEFAULT_DEMO_MQTT_PORT = 1884
const DEFAULT_DEMO_STATUS_PORT = 9411
const DEFAULT_PUNCH_EVERY = '20s'

function port(env: NodeJS.ProcessEnv, name: string, fallback: number, problems: string[]): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < 1 || value > 65535) {
    problems.push(`${name}: must be a port number from 1 to 65535, got "${raw}"`)
    return fallback
  }
  return value
}

/** Shown as ./data when under the working directory, else as the absolute path. */
export function showPath(path: string, cwd: string): string {
  const rel = relative(cwd, path)
  if (rel === '') return '.'
  if (rel.startsWith('..') || isAbsolute(rel)) return path
  return `.${sep}${rel}`
}

export function loadDemoSettings(env: NodeJS.ProcessEnv, cwd: string, config: CloudConfig): DemoSettings {
  const problems: string[] = []
  const target = parseDatabaseUrl(config.databaseUrl, cwd)
  if (target.dialect === 'sqlite' && target.path === ':memory:') {
    problems.push(
      'HAJRI_DATABASE_URL: the demo keeps its data between runs, so it needs a file (sqlite:./data/hajri.db), not sqlite::memory:',
    )
  }
  const dataDir =
    target.dialect === 'sqlite' && target.path !== ':memory:' ? dirname(target.path) : resolve(cwd, 'data')
  const mqttPort = port(env, 'HAJRI_DEMO_MQTT_PORT', DEFAULT_DEMO_MQTT_PORT, problems)
  const statusPort = port(env, 'HAJRI_DEMO_STATUS_PORT', DEFAULT_DEMO_STATUS_PORT, problems)
  if (mqttPort === statusPort) {
    problems.push(`HAJRI_DEMO_MQTT_PORT and HAJRI_DEMO_STATUS_PORT: both are ${mqttPort}; they must differ`)
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return {
    dataDir,
    dataDirShown: showPath(dataDir, cwd),
    credentialsFile: join(dataDir, DEMO_CREDENTIALS_FILE),
    agentDir: join(dataDir, 'demo-agent'),
    mqttPort,
    statusPort,
    punchEvery: DEFAULT_PUNCH_EVERY,
  }
}
