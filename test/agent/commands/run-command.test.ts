import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { EventBus } from '../../../agent/events.js'
import { runAgentCli, USAGE } from '../../../agent/main.js'
import { Spool } from '../../../agent/spool/spool.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import { formatInZone, nowMicros } from '../../../shared/time.js'
import { captureCli } from '../../support/cli-capture.js'
import { employee, TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { unusedPort } from '../../support/unused-port.js'

/**
 * `hajri-agent run` as a service manager runs it: a child process (`node --import tsx
 * agent/main.ts run --config FILE`), signalled to stop, its exit status and output read.
 */

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
/** util-linux `script`, where there is one: runs a command with a pseudo-terminal for its stdout. */
const SCRIPT_PTY = ['/usr/bin/script', '/bin/script'].find((path) => existsSync(path))
const log = pino({ level: 'silent' })

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 20))
}

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function hajriAgent(args: string[], env: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'agent/main.ts'), ...args], {
    cwd: REPO_ROOT,
    // Only what the test gives, so a developer's own HAJRI_* settings play no part.
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString()
  })
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString()
  })
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }))
  running.add(child)
  void exited.then(() => running.delete(child))
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Children still running when a test ends (it failed) are killed, not left behind. */
const running = new Set<ChildProcess>()
afterEach(() => {
  for (const child of running) child.kill('SIGKILL')
})

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

async function statusAt(port: number): Promise<AgentStatus | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/status`)
    return response.ok ? ((await response.json()) as AgentStatus) : undefined
  } catch {
    return undefined
  }
}

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-run-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('hajri-agent run with a bad configuration', () => {
  it('prints every problem and exits 2 without starting anything', async () => {
    const port = await unusedPort()
    const spoolDir = join(dir, 'bad-spool')
    const config = join(dir, 'bad.yaml')
    await writeFile(
      config,
      stringify({
        site: { id: 'pune plant' },
        cloud: { url: 'ftp://hajri.example.com', clientId: 'hjc_x', clientSecret: 'cs-bad-config-secret' },
        spool: { dir: spoolDir, maxBytes: 'lots' },
        status: { listen: `127.0.0.1:${port}` },
        devices: [],
      }),
    )
    const run = hajriAgent(['run', '--config', config])
    expect(await run.exited).toEqual({ code: 2, signal: null })
    const lines = run.stderr().trimEnd().split('\n')
    expect(lines[0]).toBe(`hajri-agent: ${config} cannot be used:`)
    const problems = lines.slice(1)
    for (const path of ['site.id', 'cloud.url', 'spool.maxBytes', 'devices']) {
      expect(
        problems.some((line) => line.startsWith(`  ${path}`)),
        `a problem at ${path}`,
      ).toBe(true)
    }
    expect(problems).toHaveLength(4)
    expect(run.stdout()).toBe('')
    expect(run.stderr()).not.toContain('cs-bad-config-secret')
    // Nothing started: no spool directory made, nothing listening.
    expect(await exists(spoolDir)).toBe(false)
    expect(await statusAt(port)).toBeUndefined()
  })

  it('exits 2 for a configuration file that is not there', async () => {
    const run = hajriAgent(['run', '--config', join(dir, 'missing.yaml')])
    expect((await run.exited).code).toBe(2)
    expect(run.stderr()).toContain('does not exist')
  })
})

describe('hajri-agent run with a good configuration', () => {
  const cloud = new TestCloud('sqlite')
  let cloudUrl: string
  let clientId: string
  let clientSecret: string
  let tenantId: string

  beforeAll(async () => {
    await cloud.start()
    cloudUrl = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
    tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'agent', scopes: ['attendance:write'] },
      TEST_ACTOR,
    )
    clientId = app.clientId
    clientSecret = app.clientSecret
  })
  afterAll(() => cloud.stop())

  /** A configuration whose secret comes from the environment, with two punches already spooled. */
  async function prepare(name: string, port: number) {
    const spoolDir = join(dir, `${name}-spool`)
    const spool = new Spool({
      dir: spoolDir,
      maxBytes: 1 << 30,
      chunkPunches: 500,
      log,
      events: new EventBus(log),
    })
    await spool.start()
    const at = Math.floor(nowMicros() / 1e6 - 300) * 1e6
    await spool.append(
      ['E001', 'E404'].map((code, i) => ({
        id: `hjp_run${name}${i}`.padEnd(36, '0'),
        deviceId: 'main-door',
        employeeCode: code,
        punchType: 'IN' as const,
        punchedAt: formatInZone(at, 'Asia/Kolkata'),
        receivedAt: '2026-11-21T00:00:00.000000Z',
      })),
    )
    await spool.stop()
    const config = join(dir, `${name}.yaml`)
    await writeFile(
      config,
      stringify({
        site: { id: 'run-test' },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's own ${ENV} substitution, not JavaScript's.
        cloud: { url: cloudUrl, clientId, clientSecret: '${HAJRI_CLIENT_SECRET}' },
        spool: { dir: spoolDir },
        status: { listen: `127.0.0.1:${port}` },
        // Everything the agent can say: a secret must not be in any of it.
        log: { level: 'trace' },
        devices: [{ id: 'main-door', serial: { path: join(dir, 'no-such-tty') } }],
      }),
    )
    return config
  }

  it('starts, serves /status, forwards its spool, and exits 0 on SIGTERM, never logging the secret', async () => {
    const port = await unusedPort()
    const config = await prepare('good', port)
    const run = hajriAgent(['run', '--config', config], { HAJRI_CLIENT_SECRET: clientSecret })
    await until(async () => {
      const status = await statusAt(port)
      return status !== undefined && status.spool.punches === 0 && status.deadLetters.count === 1
    })
    const status = (await statusAt(port)) as AgentStatus
    expect(status.agent).toMatchObject({ site: 'run-test', pid: run.child.pid })
    expect(status.forwarding.forwarded).toBe(1)
    // The serial port is not there: the device waits for it, and that is an alarm.
    await until(async () => (await statusAt(port))?.devices[0]?.state === 'waiting')
    expect((await statusAt(port))?.alarms).toEqual([expect.stringMatching(/^device main-door waiting/)])
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain(
      'hajri_agent_punches_forwarded_total 1',
    )
    // `hajri-agent status` reads it, and says there is an alarm.
    const printed = await captureCli(runAgentCli, ['status', '--url', `http://127.0.0.1:${port}`], {
      env: {},
      cwd: dir,
    })
    expect(printed.code).toBe(3)
    expect(printed.stdout).toContain('site run-test')

    run.child.kill('SIGTERM')
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(await statusAt(port)).toBeUndefined()

    // JSON lines (stdout is not a terminal), each a pino record of the agent.
    const records = run
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { app: string; msg: string })
    expect(records.every((r) => r.app === 'hajri-agent')).toBe(true)
    const messages = records.map((r) => r.msg)
    expect(messages).toContain('hajri-agent running')
    expect(messages.at(-1)).toBe('stopped')
    expect(messages.indexOf('stopping')).toBeGreaterThan(messages.indexOf('hajri-agent running'))
    // The secret, and the Basic credentials made of it, appear nowhere in what the agent wrote.
    const output = run.stdout() + run.stderr()
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64')
    expect(output).not.toContain(clientSecret)
    expect(output).not.toContain(basic)
  })

  it('exits 1, having stopped what it started, when it cannot start (its status port is taken)', async () => {
    const taken: Server = createServer().listen(0, '127.0.0.1')
    await once(taken, 'listening')
    try {
      const port = (taken.address() as { port: number }).port
      const config = await prepare('taken', port)
      const run = hajriAgent(['run', '--config', config], { HAJRI_CLIENT_SECRET: clientSecret })
      expect(await run.exited).toEqual({ code: 1, signal: null })
      const fatal = run
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { code?: string } })
        .find((r) => r.level === 60)
      expect(fatal).toMatchObject({ msg: 'the agent could not start', err: { code: 'EADDRINUSE' } })
      expect(run.stdout() + run.stderr()).not.toContain(clientSecret)
    } finally {
      taken.close()
    }
  })

  // util-linux `script` gives the agent a terminal for stdout (the logger's choice depends on it).
  it.skipIf(!SCRIPT_PTY)(
    `logs readable lines, not JSON, on a terminal${SCRIPT_PTY ? '' : ' (skipped: no util-linux script to make a terminal)'}`,
    async () => {
      const taken: Server = createServer().listen(0, '127.0.0.1')
      await once(taken, 'listening')
      try {
        const config = await prepare('tty', (taken.address() as { port: number }).port)
        const command = [
          process.execPath,
          '--import',
          'tsx',
          join(REPO_ROOT, 'agent/main.ts'),
          'run',
          '--config',
          config,
        ]
        const child = spawn(
          SCRIPT_PTY ?? 'script',
          ['-qec', command.map((a) => `'${a}'`).join(' '), '/dev/null'],
          {
            cwd: REPO_ROOT,
            env: { PATH: process.env.PATH, HAJRI_CLIENT_SECRET: clientSecret, TERM: 'dumb' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        )
        let output = ''
        child.stdout.on('data', (c: Buffer) => {
          output += c.toString()
        })
        const [code] = (await once(child, 'exit')) as [number | null]
        expect(code).toBe(1)
        const lines = output.split(/\r?\n/).filter((l) => l.trim() !== '')
        expect(lines.some((l) => l.includes('FATAL') && l.includes('the agent could not start'))).toBe(true)
        expect(lines.filter((l) => l.startsWith('{'))).toEqual([])
        expect(output).not.toContain(clientSecret)
      } finally {
        taken.close()
      }
    },
  )
})

describe('hajri-agent usage', () => {
  it('exits 2 with the usage for an unknown command', async () => {
    const run = hajriAgent(['frobnicate', '--now'])
    expect(await run.exited).toEqual({ code: 2, signal: null })
    expect(run.stderr()).toBe(`hajri-agent: unknown command "frobnicate --now"\n\n${USAGE}\n`)
    expect(run.stdout()).toBe('')
  })

  it('prints the usage and exits 0 when asked for help, or given nothing', async () => {
    for (const argv of [[], ['--help'], ['-h'], ['help']]) {
      const { code, stdout } = await captureCli(runAgentCli, argv, { env: {}, cwd: dir })
      expect(code).toBe(0)
      expect(stdout).toBe(`${USAGE}\n`)
    }
  })

  it('exits 2 for run without --config, or with an option it does not know', async () => {
    for (const argv of [['run'], ['run', '--config', 'a.yaml', '--daemon'], ['dead-letters', 'purge']]) {
      const { code, stderr } = await captureCli(runAgentCli, argv, { env: {}, cwd: dir })
      expect(code, argv.join(' ')).toBe(2)
      expect(stderr, argv.join(' ')).toContain('Usage:')
    }
  })
})
