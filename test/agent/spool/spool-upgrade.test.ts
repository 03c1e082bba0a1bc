import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { agentVersion } from '../../../agent/agent-version.js'
import type { DeadLetter } from '../../../agent/punch/spooled-punch.js'
import { SPOOL_FORMAT, SPOOL_FORMAT_FILE } from '../../../agent/spool/spool-format.js'
import type { AgentStatus } from '../../../agent/status/agent-status.js'
import type { PunchInput } from '../../../shared/punch.js'
import type { SpoolFixtureContents } from '../../fixtures/write-spool-fixture.js'
import { AgentProcess, writeAgentConfig } from '../../support/agent-process.js'
import { REPO_ROOT } from '../../support/child-program.js'
import { FakeCloud } from '../../support/fake-cloud.js'
import { unusedPort } from '../../support/unused-port.js'
import { runAgent } from '../commands/run-agent.js'
import { snapshotTree } from './spool-snapshot.js'

/**
 * An agent installed over an older one (docs/decisions/0087-spool-format-version.md): the real
 * agent process, this version, started on a copy of every spool an earlier version wrote
 * (test/fixtures/spool-format-N/, kept for good), forwards every punch in it exactly once and
 * lists its dead letters as they were written. And the other way: a spool of a newer format is
 * refused by the agent and its offline commands, with the line IT staff need, and left as it was
 * to the byte.
 */

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url))
const SECRET_ENV = 'HAJRI_UPGRADE_TEST_SECRET'

const FORMATS = readdirSync(FIXTURES)
  .map((name) => /^spool-format-(\d+)$/.exec(name))
  .filter((m) => m !== null)
  .map((m) => Number(m[1]))
  .sort((a, b) => a - b)

/** Every fixture as written, and the first also as an agent from before format markers left it. */
const CASES = FORMATS.flatMap((format) => [
  { name: `format ${format}`, format, marker: true },
  ...(format === 1 ? [{ name: 'format 1, from an agent before format markers', format, marker: false }] : []),
])

async function contents(format: number): Promise<SpoolFixtureContents> {
  return JSON.parse(await readFile(join(FIXTURES, `spool-format-${format}`, 'expected.json'), 'utf8'))
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
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
const cloud = new FakeCloud()
const agents: AgentProcess[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-spool-upgrade-'))
  await cloud.start()
})
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.dispose()
  cloud.reset()
})
afterAll(async () => {
  await cloud.stop()
  await rm(dir, { recursive: true, force: true })
})

/** A copy of a fixture's spool, and an agent configuration on it. */
async function prepare(name: string, format: number, options: { marker: boolean }) {
  const spoolDir = join(dir, `${name}-spool`)
  await cp(join(FIXTURES, `spool-format-${format}`, 'spool'), spoolDir, { recursive: true })
  if (!options.marker) await rm(join(spoolDir, SPOOL_FORMAT_FILE))
  const statusPort = await unusedPort()
  const configPath = join(dir, `${name}.yaml`)
  await writeAgentConfig(configPath, {
    siteId: 'upgrade-test',
    cloudUrl: cloud.url,
    clientId: 'hjc_agent',
    clientSecretEnv: SECRET_ENV,
    spoolDir,
    chunkPunches: 500,
    concurrency: 2,
    timeoutSeconds: 5,
    statusPort,
    // A device is required; this one never appears, and sends nothing.
    serial: { path: join(dir, 'no-such-tty'), deviceId: 'main-door' },
  })
  return { spoolDir, statusPort, configPath }
}

describe.each(CASES)('this agent, installed over a spool of $name', ({ name, format, marker }) => {
  it('forwards every punch in it exactly once, and lists its dead letters as they were written', async () => {
    const expected = await contents(format)
    const { spoolDir, statusPort, configPath } = await prepare(name.replace(/\W+/g, '-'), format, { marker })
    const agent = new AgentProcess({
      configPath,
      env: { [SECRET_ENV]: 'hjs_upgrade_secret' },
      logPath: join(dir, `${name.replace(/\W+/g, '-')}.log`),
    })
    agents.push(agent)
    await agent.start()

    const sent = () =>
      cloud
        .punchRequests()
        .flatMap((r) => ((r.json?.punches ?? [r.json]) as PunchInput[]).filter((p) => p !== undefined))
    await until(async () => (await statusAt(statusPort))?.spool.punches === 0, 'the spool to drain')
    const status = (await statusAt(statusPort)) as AgentStatus
    expect(status.agent.version).toBe(agentVersion())
    expect(status.deadLetters.count).toBe(expected.deadLetters.length)
    expect(status.spool.quarantinedChunks).toBe(0)
    // Each punch once, as it was spooled (in whatever order concurrent requests took).
    const byId = (a: PunchInput, b: PunchInput) => String(a.externalId).localeCompare(String(b.externalId))
    expect(sent().sort(byId)).toEqual(
      expected.punches
        .map((p) => ({
          employeeCode: p.employeeCode,
          punchType: p.punchType,
          punchedAt: p.punchedAt,
          deviceId: p.deviceId,
          source: 'hajri-agent',
          externalId: p.id,
        }))
        .sort(byId),
    )
    const served = (await (await fetch(`http://127.0.0.1:${statusPort}/dead-letters`)).json()) as {
      data: DeadLetter[]
    }
    expect(served.data).toEqual(expected.deadLetters)
    expect(await agent.stop()).toBe(0)
    expect(agent.errors).toEqual([])

    // The stopped agent's spool, read by this version's offline command.
    const listed = await runAgent(dir, {}, 'dead-letters', 'list', '--spool', spoolDir, '--json')
    expect(listed).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(listed.stdout)).toEqual(expected.deadLetters)
    // A spool in this agent's format keeps the marker of the agent that made it so; one it had to
    // adopt or migrate is marked by this agent.
    expect(JSON.parse(await readFile(join(spoolDir, SPOOL_FORMAT_FILE), 'utf8'))).toEqual({
      format: SPOOL_FORMAT,
      writtenBy: marker && format === SPOOL_FORMAT ? expected.writtenBy : agentVersion(),
    })
  })
})

describe('a spool written by a newer agent', () => {
  const NEWER = { format: SPOOL_FORMAT + 1, writtenBy: '9.4.0' }
  const message = (spoolDir: string) =>
    `the spool ${spoolDir} was written by hajri-agent ${NEWER.writtenBy} (spool format ${NEWER.format}); ` +
    `this agent (hajri-agent ${agentVersion()}) reads format <= ${SPOOL_FORMAT}: ` +
    `install ${NEWER.writtenBy} or newer; nothing in the spool was changed`

  it('is refused by the agent and its offline commands, in one line, and left as it was to the byte', async () => {
    const { spoolDir, statusPort, configPath } = await prepare('newer', SPOOL_FORMAT, { marker: true })
    await writeFile(join(spoolDir, SPOOL_FORMAT_FILE), JSON.stringify({ ...NEWER, laterField: [1, 2] }))
    // What the agent's start would clean away if it opened the spool: a write it never finished.
    await writeFile(join(spoolDir, 'chunk-0000000000000099-1.json.tmp'), '{"kind":"chu')
    const before = await snapshotTree(spoolDir)

    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'agent/main.ts', 'run', '--config', configPath],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH, [SECRET_ENV]: 'hjs_upgrade_secret' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString()
    })
    const [code] = await once(child, 'exit')
    expect(code).toBe(1)
    expect(stderr).toBe(`hajri-agent: ${message(spoolDir)}\n`)
    // The log says it too, with the error's code, for whoever reads the service's log.
    const fatal = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'the agent could not start')
    expect(fatal?.err).toMatchObject({ code: 'spool_format_newer', message: message(spoolDir) })
    expect(await statusAt(statusPort)).toBeUndefined()
    expect(await snapshotTree(spoolDir)).toEqual(before)

    for (const command of [
      ['dead-letters', 'list', '--spool', spoolDir],
      ['dead-letters', 'export', '--spool', spoolDir, '--format', 'csv'],
      ['dead-letters', 'replay', '--spool', spoolDir],
    ]) {
      const result = await runAgent(dir, {}, ...command)
      expect(result, command.join(' ')).toEqual({
        code: 1,
        stdout: '',
        stderr: `hajri-agent: ${message(spoolDir)}\n`,
      })
    }
    expect(await snapshotTree(spoolDir)).toEqual(before)
  })
})
