import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The agent's logger writes to the process's stdout itself (pino's destination, or pino-pretty's),
 * so it is run in a child process, as the agent runs, and what reaches stdout is read back. Each
 * log call carries secrets of its own, so a leak names the call that leaked.
 */

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Log calls by message: the object logged. Secrets are `S-<message>-<n>`. */
const CALLS: Record<string, Record<string, unknown>> = {
  nested: {
    cloud: { url: 'https://hajri.example.com', clientId: 'hjc_1', clientSecret: 'S-nested-1' },
    user: { username: 'gate-1', password: 'S-nested-2' },
    headers: { authorization: 'Bearer S-nested-3' },
    token: { access_token: 'S-nested-4', expires_in: 3600 },
  },
  request: { req: { method: 'POST', headers: { authorization: 'Basic S-request-1' } } },
  config: { config: { site: { id: 'pune' }, cloud: { clientId: 'hjc_1', clientSecret: 'S-config-1' } } },
  'top level': {
    clientSecret: 'S-top level-1',
    password: 'S-top level-2',
    authorization: 'Bearer S-top level-3',
    access_token: 'S-top level-4',
  },
  'header case': {
    headers: { Authorization: 'Bearer S-header case-1' },
    req: { headers: { Authorization: 'Basic S-header case-2' } },
  },
  'whole config': {
    config: {
      cloud: { clientId: 'hjc_1', clientSecret: 'S-whole config-1' },
      mqtt: {
        embedded: { port: 1883, users: [{ username: 'gate-1', password: 'S-whole config-2' }] },
        external: {
          url: 'mqtt://broker',
          clientId: 'agent',
          username: 'agent',
          password: 'S-whole config-3',
        },
      },
    },
  },
}

/** A child that makes the agent's logger and logs each call (and a debug line it must drop). */
const SCRIPT = `
import { createAgentLogger } from '${REPO_ROOT}/agent/agent-logger.ts'
const calls = JSON.parse(process.env.CALLS)
const log = createAgentLogger({ level: 'info', pretty: process.env.PRETTY === '1' })
log.debug({ clientId: 'hjc_debug' }, 'below the level')
for (const [msg, obj] of Object.entries(calls)) log.info(obj, msg)
log.child({ component: 'token' }).warn({ cloud: { clientSecret: 'S-child-1' } }, 'child')
`

async function runLogger(pretty: boolean): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, CALLS: JSON.stringify(CALLS), PRETTY: pretty ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const [code] = (await once(child, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`the logger child exited ${code}: ${stderr}`)
  return stdout
}

let dir: string
let script: string
/** JSON mode: one record per log line, by message. */
let records: Map<string, Record<string, unknown>>
let jsonOutput: string
let prettyOutput: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-logger-'))
  script = join(dir, 'log.mts')
  await writeFile(script, SCRIPT)
  ;[jsonOutput, prettyOutput] = await Promise.all([runLogger(false), runLogger(true)])
  records = new Map(
    jsonOutput
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map((r) => [String(r.msg), r]),
  )
}, 60_000)
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The secrets of one call that reached the output. */
function leaks(output: string, msg: string): string[] {
  return [...output.matchAll(new RegExp(`S-${msg}-\\d`, 'g'))].map((m) => m[0])
}

describe('the agent logger, as JSON lines (not a terminal)', () => {
  it('writes one JSON record per line, with the app name, level and message', () => {
    expect([...records.keys()]).toEqual([...Object.keys(CALLS), 'child'])
    expect(records.get('nested')).toMatchObject({ app: 'hajri-agent', level: 30, msg: 'nested' })
    expect(records.get('child')).toMatchObject({ level: 40, component: 'token' })
    expect(jsonOutput).not.toContain('below the level')
  })

  it('keeps what is not secret', () => {
    expect(records.get('nested')).toMatchObject({
      cloud: { url: 'https://hajri.example.com', clientId: 'hjc_1' },
      user: { username: 'gate-1' },
      token: { expires_in: 3600 },
    })
  })

  it('redacts secrets one level down: clientSecret, password, authorization, access_token', () => {
    expect(leaks(jsonOutput, 'nested')).toEqual([])
    expect(records.get('nested')).toMatchObject({
      cloud: { clientSecret: '[redacted]' },
      user: { password: '[redacted]' },
      headers: { authorization: '[redacted]' },
      token: { access_token: '[redacted]' },
    })
  })

  it("redacts a request's Authorization header and a logged configuration's client secret", () => {
    expect(leaks(jsonOutput, 'request')).toEqual([])
    expect(leaks(jsonOutput, 'config')).toEqual([])
    expect(leaks(jsonOutput, 'child')).toEqual([])
  })

  // docs/decisions/0018-no-secrets-in-logs.md and agent-logger.ts: secrets never reach the logs, whatever
  // object carries them.
  it('redacts secrets given at the top level of a log call', () => {
    expect(leaks(jsonOutput, 'top level')).toEqual([])
  })

  it('redacts an Authorization header whatever the case of its name', () => {
    expect(leaks(jsonOutput, 'header case')).toEqual([])
  })

  it('redacts every password of a configuration logged whole, MQTT users included', () => {
    expect(leaks(jsonOutput, 'whole config')).toEqual([])
  })
})

describe('the agent logger, pretty (on a terminal)', () => {
  it('writes readable lines, not JSON', () => {
    const lines = prettyOutput.trim().split('\n')
    expect(() => JSON.parse(lines[0] ?? '')).toThrow()
    expect(prettyOutput).toMatch(/INFO.*nested/)
    expect(prettyOutput).toMatch(/WARN.*child/)
    expect(prettyOutput).not.toContain('below the level')
  })

  it('redacts as the JSON lines do', () => {
    for (const msg of ['nested', 'request', 'config', 'child'])
      expect(leaks(prettyOutput, msg), msg).toEqual([])
    expect(prettyOutput).toContain('[redacted]')
  })
})
