/**
 * `hajri-agent doctor` on this machine alone: a configuration that does not load, usage errors,
 * the spool directory (writable, not yet made, read-only: as root, checked by the user nobody) and a status port another server holds.
 */
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CliResult } from '../../support/cli-capture.js'
import { unusedPort } from '../../support/unused-port.js'
import { runAgent } from '../commands/run-agent.js'
import { checkOf, doctor, doctorDir, humanLines, writeConfig } from './doctor-kit.js'

let dir: Awaited<ReturnType<typeof doctorDir>>
const cleanups: (() => Promise<unknown>)[] = []
beforeAll(async () => {
  dir = await doctorDir()
})
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(() => dir.remove())

const IS_ROOT = process.getuid?.() === 0
/** The user `nobody` on Linux. */
const NOBODY = 65534
const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

describe('the configuration', () => {
  it('fails a file that does not load, skips every other check saying why, and exits 1', async () => {
    await writeFile(join(dir.dir, 'agent.yaml'), 'site: { id: pune }\ncloud: { url: ftp://x }\n')
    const human = await doctor(dir.dir)
    expect(human.code).toBe(1)
    const [line, advice] = humanLines(human.stdout, 'configuration')
    expect(line).toMatch(/^FAIL {2}configuration .* problem\(s\): /)
    expect(line).toContain('cloud.url')
    expect(advice).toContain('hajri-agent check-config --config')
    for (const check of ['cloud', 'clock', 'devices', 'spool', 'status port']) {
      expect(humanLines(human.stdout, check)[0]).toMatch(/^SKIP .*the configuration could not be read/)
    }
    const json = await doctor(dir.dir, '--json')
    expect(json.code).toBe(1)
    expect(json.json()).toMatchObject({ ok: false, counts: { fail: 1, skip: 5, pass: 0, warn: 0 } })
  })

  it('exits 2 without --config, with an operand, or with a bad --timeout', async () => {
    for (const argv of [
      ['doctor'],
      ['doctor', 'agent.yaml'],
      ['doctor', '--config', 'agent.yaml', '--timeout', '0'],
      ['doctor', '--config', 'agent.yaml', '--verbose'],
    ]) {
      const run = await runAgent(dir.dir, {}, ...argv)
      expect(run.code, argv.join(' ')).toBe(2)
      expect(run.stderr, argv.join(' ')).toContain('Usage:')
    }
  })
})

describe('the spool directory', () => {
  it('passes a writable directory, leaving nothing behind, and one the agent can still create', async () => {
    const spool = join(dir.dir, 'spool-present')
    await mkdir(spool)
    await writeFile(join(spool, 'chunk-1'), 'x'.repeat(1000))
    await writeConfig(dir.dir, { spool: { dir: spool, maxBytes: '1MiB' } })
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'spool')).toMatchObject({
      status: 'pass',
      detail: expect.stringMatching(
        /is writable; .* free on its disk, spool.maxBytes 1 MiB, 1000 bytes spooled/,
      ),
    })
    expect(await readdir(spool)).toEqual(['chunk-1'])

    const later = join(dir.dir, 'not-yet', 'spool')
    await writeConfig(dir.dir, { spool: { dir: later, maxBytes: '1MiB' } })
    const again = await doctor(dir.dir, '--json')
    expect(checkOf(again, 'spool')).toMatchObject({
      status: 'pass',
      detail: expect.stringContaining('does not exist yet; the agent can create it'),
    })
    expect(await readdir(dir.dir)).not.toContain('not-yet')
  })

  it('warns when the disk holds less than spool.maxBytes', async () => {
    await writeConfig(dir.dir, { spool: { dir: join(dir.dir, 'spool'), maxBytes: '1000TiB' } })
    const human = await doctor(dir.dir)
    const [line, advice] = humanLines(human.stdout, 'spool')
    expect(line).toMatch(/^WARN {2}spool .*the disk fills before the spool's limit/)
    expect(advice).toContain('lower spool.maxBytes')
  })

  it('fails a directory this user cannot write to', async (context) => {
    const nobodyCannot = IS_ROOT ? nobodyCannotRunTheAgent() : undefined
    if (nobodyCannot) context.skip(nobodyCannot)
    const spool = join(dir.dir, 'spool-read-only')
    await mkdir(spool)
    await chmod(spool, 0o555)
    cleanups.push(() => chmod(spool, 0o755))
    await writeConfig(dir.dir, { spool: { dir: spool } })
    // Root writes whatever a directory's mode says: as root, doctor runs as nobody instead.
    const json = IS_ROOT ? await doctorAsNobody(dir.dir) : await doctor(dir.dir, '--json')
    expect(json.code, json.stderr).toBe(1)
    expect(checkOf(json, 'spool')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('cannot be written by this user (EACCES'),
      advice: expect.stringContaining('chown'),
    })
  })
})

/**
 * Why nobody cannot run hajri-agent from this checkout (a repository under a directory only root
 * may enter), or undefined: then the test is skipped as root, since root ignores the mode.
 */
function nobodyCannotRunTheAgent(): string | undefined {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      'require("fs").accessSync(process.argv[1], require("fs").constants.R_OK)',
      join(REPO_ROOT, 'agent/main.ts'),
    ],
    { uid: NOBODY, gid: NOBODY, encoding: 'utf8' },
  )
  if (probe.status === 0) return undefined
  return `running as root, which writes whatever a directory's mode says, and the user nobody cannot read ${REPO_ROOT} (${probe.error?.message ?? probe.stderr.split('\n')[0]})`
}

/** `hajri-agent doctor --json` as a child process of the user nobody, who may read the test's files. */
async function doctorAsNobody(at: string): Promise<CliResult> {
  await chmod(at, 0o755)
  await chmod(join(at, 'agent.yaml'), 0o644)
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'agent/main.ts'),
      'doctor',
      '--config',
      join(at, 'agent.yaml'),
      '--json',
    ],
    {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH },
      uid: NOBODY,
      gid: NOBODY,
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
  return new CliResult(code as number, stdout, stderr)
}

describe('the status port', () => {
  it('passes a free port, and fails one another server holds', async () => {
    const port = await unusedPort()
    await writeConfig(dir.dir, { status: { listen: `127.0.0.1:${port}` } })
    const free = await doctor(dir.dir, '--json')
    expect(checkOf(free, 'status port')).toMatchObject({
      status: 'pass',
      detail: `127.0.0.1:${port} is free: the agent can listen there`,
    })

    const other: Server = createServer((_request, response) => response.writeHead(404).end('not an agent'))
    await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve))
    cleanups.push(() => new Promise((resolve) => other.close(resolve)))
    const human = await doctor(dir.dir)
    expect(human.code).toBe(1)
    const [line, advice] = humanLines(human.stdout, 'status port')
    expect(line).toMatch(/^FAIL {2}status port .*in use by another program \(the agent is not running\)/)
    expect(advice).toContain(`sport = :${port}`)
    const json = await doctor(dir.dir, '--json')
    expect(checkOf(json, 'status port').status).toBe('fail')
  })
})
