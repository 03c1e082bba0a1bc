import { dirname, join, resolve } from 'node:path'
import { ConfigFileError } from './config-file-error.js'
import { substituteString } from './env-substitution.js'
import { readConfigText } from './load.js'
import { ProblemList } from './problem-list.js'
import { AgentConfigSchema } from './schema.js'
import { resolveFrom } from './setting-files.js'
import { parseYamlSource } from './yaml-source.js'

/**
 * The file, in spool.dir, where a running agent keeps its control token: the status listener
 * writes a random token there when it starts and finds none of its own (status/control-token.ts,
 * mode 0600), and takes changes
 * (POST /dead-letters/replay, POST /devices/:id/backfill) only with it. In the spool directory
 * because that is the one directory the agent's user owns and keeps private (systemd's
 * StateDirectoryMode=0750; the Windows service account's own folder), and because the CLI finds it
 * from the configuration file the agent itself was started with.
 */
const CONTROL_TOKEN_FILE = 'control-token'

export function controlTokenPath(spoolDir: string): string {
  return join(spoolDir, CONTROL_TOKEN_FILE)
}

/** What the CLI needs of agent.yaml to change things through the running agent. */
export interface ControlSettings {
  /** `<spool.dir>/control-token`, absolute. */
  tokenFile: string
  /** The status listener as this machine reaches it: `http://127.0.0.1:9410`. */
  statusUrl: string
}

type Mapping = Record<string, unknown>
const mapping = (value: unknown): Mapping | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Mapping) : undefined

/**
 * Reads spool.dir and status.listen of a configuration file, and nothing else: the person running
 * the CLI has neither the agent's environment (its `${HAJRI_CLIENT_SECRET}`) nor, often, its secret
 * files, so the whole file is not loaded. Defaults are the schema's; a relative spool.dir is read
 * from the file's directory, as the agent reads it.
 */
export async function readControlSettings(file: string, env: NodeJS.ProcessEnv): Promise<ControlSettings> {
  const path = resolve(file)
  const parsed = parseYamlSource(await readConfigText(path))
  if (!parsed.ok) throw new ConfigFileError(path, parsed.problems)
  const root = mapping(parsed.source.value)
  const spool = mapping(root?.spool)
  const status = mapping(root?.status)
  const problems = new ProblemList()
  const setting = (value: unknown, fallback: string, at: string[]): string => {
    if (value === undefined) return fallback
    if (typeof value !== 'string') {
      problems.add(at, 'must be a string')
      return fallback
    }
    return substituteString(value, env, at, problems)
  }
  const defaults = AgentConfigSchema.properties
  const spoolDir = setting(spool?.dir, defaults.spool.properties.dir.default, ['spool', 'dir'])
  const listen = setting(status?.listen, defaults.status.properties.listen.default, ['status', 'listen'])
  if (problems.size > 0) throw new ConfigFileError(path, problems.toProblems(parsed.source.locate))
  return {
    tokenFile: controlTokenPath(resolveFrom(dirname(path), spoolDir)),
    statusUrl: `http://${reachableListen(listen)}`,
  }
}

/** `0.0.0.0:9410` is bound on every interface, and reached here on loopback: `127.0.0.1:9410`. */
function reachableListen(listen: string): string {
  const at = listen.lastIndexOf(':')
  const host = listen.slice(0, at)
  const port = listen.slice(at + 1)
  if (host === '0.0.0.0') return `127.0.0.1:${port}`
  if (host === '[::]' || host === '[::0]') return `[::1]:${port}`
  return listen
}
