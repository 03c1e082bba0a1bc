import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { type ControlSettings, readControlSettings } from '../config/control-token-file.js'
import type { AgentIo } from './agent-command.js'
import { DEFAULT_STATUS_URL } from './status-command.js'

/**
 * The options of the commands that change something through the running agent (`dead-letters
 * replay`, `devices backfill`): where it listens, and where its control token is.
 */
export const CONTROL_OPTIONS = {
  url: { type: 'string' },
  config: { type: 'string', short: 'c' },
  'token-file': { type: 'string' },
} as const

/** Where the deploy guides put the configuration (deploy/hajri-agent.service, windows-service.md). */
const DEFAULT_CONFIG_FILE = process.platform === 'win32' ? 'C:\\hajri\\agent.yaml' : '/etc/hajri/agent.yaml'

/** How this command reaches the running agent to change something. */
export interface AgentControl {
  /** The status listener, without a trailing slash. */
  url: string
  /** For a change: the token (when found) and the JSON content type the agent requires. */
  headers: Record<string, string>
  /** What to say when the agent refuses the token (401): why none was found, or whose it was. */
  refusal: string
}

/**
 * Finds the agent and its control token (changes need the token the agent
 * writes at start to `<spool.dir>/control-token`, mode 0600). The token file, first found of:
 * 1. `--token-file FILE`, or the environment variable HAJRI_AGENT_TOKEN_FILE;
 * 2. the spool.dir of `--config agent.yaml`, or of HAJRI_AGENT_CONFIG;
 * 3. the spool.dir of /etc/hajri/agent.yaml (C:\hajri\agent.yaml on Windows), when it exists.
 * The agent's address: `--url`, HAJRI_AGENT_STATUS_URL, then the status.listen of that
 * configuration, then http://127.0.0.1:9410. Only the agent's user (and root) can read the token:
 * others run the command as that user (`sudo -u hajri hajri-agent ...`).
 *
 * A token that cannot be found is not an error yet: the agent may not be running at all, which the
 * commands say in their own way (dead-letters replay offers --spool); `refusal` says it if the agent
 * answers 401.
 */
export async function agentControl(
  values: { url?: string; config?: string; 'token-file'?: string },
  io: AgentIo,
): Promise<AgentControl> {
  const configFile = values.config ?? io.env.HAJRI_AGENT_CONFIG
  let settings: ControlSettings | undefined
  let settingsProblem: string | undefined
  if (configFile !== undefined) {
    // Named on purpose: a file that cannot be read is the error to report.
    settings = await readControlSettings(resolve(io.cwd, configFile), io.env)
  } else if (existsSync(DEFAULT_CONFIG_FILE)) {
    try {
      settings = await readControlSettings(DEFAULT_CONFIG_FILE, io.env)
    } catch (err) {
      settingsProblem = (err as Error).message.split('\n').join(' ')
    }
  }
  const url = (
    values.url ??
    io.env.HAJRI_AGENT_STATUS_URL ??
    settings?.statusUrl ??
    DEFAULT_STATUS_URL
  ).replace(/\/+$/, '')
  const named = values['token-file'] ?? io.env.HAJRI_AGENT_TOKEN_FILE
  const tokenFile = named !== undefined ? resolve(io.cwd, named) : settings?.tokenFile
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (tokenFile === undefined) {
    return {
      url,
      headers,
      refusal:
        "the agent takes changes only with its control token: give --config agent.yaml (the agent's configuration; the token is in its spool.dir) or --token-file FILE" +
        (settingsProblem ? ` (${DEFAULT_CONFIG_FILE} could not be read: ${settingsProblem})` : ''),
    }
  }
  const read = await readToken(tokenFile)
  if ('problem' in read) return { url, headers, refusal: read.problem }
  headers.authorization = `Bearer ${read.token}`
  return {
    url,
    headers,
    refusal: `the agent at ${url} refused the control token in ${tokenFile}: it is another agent's (check --config, --token-file or --url)`,
  }
}

async function readToken(file: string): Promise<{ token: string } | { problem: string }> {
  try {
    const token = (await readFile(file, 'utf8')).trim()
    return token === '' ? { problem: `${file} is empty: restart the agent to write a new token` } : { token }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      return {
        problem: `no control token at ${file}: the agent writes it there when it starts; is this its spool.dir?`,
      }
    }
    if (code === 'EACCES' || code === 'EPERM') {
      return {
        problem: `${file} can be read only by the agent's user: run this as that user (e.g. sudo -u hajri hajri-agent ...)`,
      }
    }
    return { problem: `${file} cannot be read (${code ?? String(err)})` }
  }
}
