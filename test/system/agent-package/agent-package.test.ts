/**
 * The agent as IT staff install it (docs/decisions/0086-agent-package.md, docs/site-agent/install.md):
 * `npm run package:agent`'s one tarball, installed with `npm install -g --offline` into an empty
 * prefix with an empty npm cache and a PATH holding node, npm and sh alone, so that nothing can be
 * downloaded and nothing compiled. The installed `hajri-agent` then checks configuration files and
 * runs against a real cloud, and a punch from `hajri-agent simulate` is stored. The tarball's size
 * and the install's duration are printed, not asserted (docs/decisions/0032-speed-is-benchmarked.md).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { renderWindowsServiceScript } from '../../../agent/service/windows-service-script.js'
import { type AgentPackage, bareImports, buildAgentPackage } from '../../../scripts/package-agent.js'
import { writeAgentConfig } from '../../support/agent-process.js'
import { ChildProgram } from '../../support/child-program.js'
import { agentStatus, freePort, waitFor } from '../../support/e2e-kit.js'
import { DurabilityRig } from '../e2e/durability-rig.js'

const exec = promisify(execFile)

/** What a compile on install would need; none of them may be reachable from the install's PATH. */
const COMPILERS = ['gcc', 'g++', 'cc', 'c++', 'make', 'python3', 'python', 'node-gyp']

/** The only install script among the bundled packages: it loads a prebuilt binary, or fails. */
const ALLOWED_INSTALL_SCRIPTS: Record<string, string> = { '@serialport/bindings-cpp': 'node-gyp-build' }

let scratch: string
let built: AgentPackage
let prefix: string
/** A PATH of symlinks to node, npm and sh. */
let bareBin: string
let installed: string
let installOutput: string

/** Runs a program to its end; its exit status and output (never throws on a non-zero exit). */
async function runFile(file: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd = scratch) {
  try {
    const { stdout, stderr } = await exec(file, args, { env, cwd, maxBuffer: 16 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }
  }
}

function bareEnv(): NodeJS.ProcessEnv {
  return { PATH: bareBin, HOME: join(scratch, 'home'), LANG: 'C.UTF-8' }
}

/** The installed `hajri-agent`, through its bin link, as a user would type it. */
function hajriAgent(...args: string[]) {
  return runFile(join(prefix, 'bin', 'hajri-agent'), args, bareEnv())
}

/** The installed `hajri-agent doctor --json`, with the secrets the configuration reads from the environment. */
async function doctor(configPath: string, env: NodeJS.ProcessEnv) {
  const run = await runFile(
    join(prefix, 'bin', 'hajri-agent'),
    ['doctor', '--config', configPath, '--json'],
    {
      ...bareEnv(),
      ...env,
    },
  )
  const report = JSON.parse(run.stdout) as {
    ok: boolean
    checks: { check: string; status: string; detail: string }[]
  }
  const status = (check: string) => report.checks.filter((c) => c.check === check).map((c) => c.status)
  return { ...run, report, status }
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hajri-agent-package-test-'))
  const startedBuild = Date.now()
  built = await buildAgentPackage({ outDir: join(scratch, 'out') })
  const buildMs = Date.now() - startedBuild

  bareBin = join(scratch, 'bin')
  await mkdir(bareBin)
  await mkdir(join(scratch, 'home'))
  for (const tool of ['node', 'npm', 'sh']) {
    const { stdout } = await exec('sh', ['-c', `command -v ${tool}`])
    await symlink(stdout.trim(), join(bareBin, tool))
  }
  prefix = join(scratch, 'prefix')
  const cache = join(scratch, 'npm-cache')
  await mkdir(prefix)
  await mkdir(cache)
  const startedInstall = Date.now()
  const install = await runFile(
    join(bareBin, 'npm'),
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--offline',
      '--cache',
      cache,
      '--no-audit',
      '--no-fund',
      built.tarball,
    ],
    bareEnv(),
  )
  const installMs = Date.now() - startedInstall
  installOutput = `${install.stdout}${install.stderr}`
  if (install.code !== 0) throw new Error(`npm install -g failed (exit ${install.code}):\n${installOutput}`)
  installed = join(prefix, 'lib', 'node_modules', 'hajri-agent')
  console.warn(
    `agent package: ${(built.bytes / 1024 / 1024).toFixed(1)} MiB, ${built.bundled.length} packages bundled; ` +
      `built in ${(buildMs / 1000).toFixed(1)} s, installed offline in ${(installMs / 1000).toFixed(1)} s`,
  )
}, 600_000)

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

/** Every package directory under `modules` (scoped ones and nested node_modules included). */
async function packagesUnder(modules: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(modules, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const dirs = entry.name.startsWith('@')
      ? (await readdir(join(modules, entry.name))).map((name) => join(modules, entry.name, name))
      : [join(modules, entry.name)]
    for (const dir of dirs) {
      found.push(dir)
      found.push(...(await packagesUnder(join(dir, 'node_modules'))))
    }
  }
  return found
}

async function manifest(dir: string): Promise<{ name: string; scripts?: Record<string, string> }> {
  return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))
}

describe('the agent package, installed offline with no compiler', () => {
  it('was installed with no compiler reachable: a native module to build would have failed', async () => {
    for (const tool of COMPILERS) {
      const found = await runFile(join(bareBin, 'sh'), ['-c', `command -v ${tool}`], bareEnv())
      expect(found.code, `${tool} is reachable from the install's PATH: ${found.stdout}`).not.toBe(0)
    }
    expect(installOutput).not.toMatch(/gyp (info|ERR)/)
  })

  it('holds the agent alone: no better-sqlite3, no cloud, no console', async () => {
    const dirs = await packagesUnder(join(installed, 'node_modules'))
    expect(dirs).toHaveLength(built.bundled.length)
    const names = new Set(await Promise.all(dirs.map(async (dir) => (await manifest(dir)).name)))
    for (const cloudOnly of [
      'better-sqlite3',
      'pg',
      'kysely',
      'ioredis',
      'react',
      'vite',
      'typescript',
      'tsx',
    ]) {
      expect(names.has(cloudOnly), cloudOnly).toBe(false)
    }
    expect((await readdir(join(installed, 'dist'))).sort()).toEqual(['agent', 'shared'])
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'))
    expect(pkg).toMatchObject({
      name: 'hajri-agent',
      version: built.version,
      bin: { 'hajri-agent': 'dist/agent/main.js' },
      engines: { node: '>=20.11' },
    })
  })

  it('declares and carries every package its built files import', async () => {
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8'))
    const imports = await bareImports(join(installed, 'dist'))
    expect(imports.size).toBeGreaterThan(5)
    for (const [name, files] of imports) {
      expect(pkg.dependencies, `${name}, imported by ${files[0]}`).toHaveProperty([name])
      expect(pkg.bundleDependencies, name).toContain(name)
      expect((await manifest(join(installed, 'node_modules', name))).name).toBe(name)
    }
  })

  it("loads serialport's prebuilt native binding", async () => {
    const load = await runFile(
      join(bareBin, 'node'),
      [
        '--input-type=module',
        '-e',
        "const b = await import('@serialport/bindings-cpp'); console.log(typeof b.autoDetect())",
      ],
      bareEnv(),
      installed,
    )
    expect(load, load.stderr).toMatchObject({ code: 0, stdout: 'object\n' })
  })

  it("answers --version with the package's version", async () => {
    const version = await hajriAgent('--version')
    expect(version).toEqual({ code: 0, stdout: `${built.version}\n`, stderr: '' })
  })

  it('checks a good and a bad configuration file', async () => {
    const dir = await mkdtemp(join(scratch, 'config-'))
    const good = join(dir, 'good.yaml')
    await writeAgentConfig(good, {
      siteId: 'pune-plant-1',
      cloudUrl: 'http://127.0.0.1:1',
      clientId: 'hjc_test',
      clientSecretEnv: 'HOME',
      spoolDir: join(dir, 'spool'),
      chunkPunches: 100,
      concurrency: 1,
      timeoutSeconds: 5,
      statusPort: await freePort(),
      serial: { path: '/dev/ttyUSB0', deviceId: 'main-door' },
    })
    const ok = await hajriAgent('check-config', '--config', good)
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toContain(`ok: ${good}`)
    const bad = join(dir, 'bad.yaml')
    await writeFile(bad, (await readFile(good, 'utf8')).replace('http://127.0.0.1:1', 'ftp://127.0.0.1:1'))
    const refused = await hajriAgent('check-config', '--config', bad)
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(`${bad}: 1 problem; the agent would not start`)
    expect(refused.stderr).toContain('cloud.url')
  })

  describe('against a cloud', () => {
    const rig = new DurabilityRig('sqlite')

    it('passes doctor, runs, and a punch sent by hajri-agent simulate is stored', async () => {
      const { tenantId, clientId, clientSecret } = await rig.setUpTenant(['E001'])
      const proxy = await rig.startProxy()
      const dir = await rig.tempDir('hajri-agent-package-run-')
      const [mqttPort, statusPort] = [await freePort(), await freePort()]
      const configPath = join(dir, 'agent.yaml')
      await writeAgentConfig(configPath, {
        siteId: 'pune-plant-1',
        cloudUrl: `http://127.0.0.1:${proxy.port}`,
        clientId,
        clientSecretEnv: 'HAJRI_TEST_CLIENT_SECRET',
        spoolDir: join(dir, 'spool'),
        chunkPunches: 100,
        concurrency: 1,
        timeoutSeconds: 10,
        statusPort,
        mqtt: {
          port: mqttPort,
          username: 'gate',
          passwordEnv: 'HAJRI_TEST_MQTT_PASSWORD',
          topic: 'punches/gate',
          deviceId: 'gate',
        },
      })
      const passwordFile = join(dir, 'mqtt-password')
      await writeFile(passwordFile, 'gate-password\n', { mode: 0o600 })
      const secrets = { HAJRI_TEST_CLIENT_SECRET: clientSecret, HAJRI_TEST_MQTT_PASSWORD: 'gate-password' }
      // Before the agent runs: the cloud answers and takes the credentials, the ports are free.
      const before = await doctor(configPath, secrets)
      expect(before.code, `${before.stdout}${before.stderr}`).toBe(0)
      expect(before.report.ok).toBe(true)
      for (const check of [
        'cloud connection',
        'cloud credentials',
        'embedded broker port',
        'spool',
        'status port',
      ])
        expect(before.status(check), check).toEqual(['pass'])
      // A warning is no failure: the configuration's (a setting left open) or the clock's (a skew of seconds).
      for (const check of ['configuration', 'clock'])
        expect(['pass', 'warn'], check).toContain(before.status(check)[0])
      // A wrong secret is a failure, named, and the secret is never printed.
      const refused = await doctor(configPath, { ...secrets, HAJRI_TEST_CLIENT_SECRET: 'not-the-secret' })
      expect(refused.code).toBe(1)
      expect(refused.status('cloud credentials')).toEqual(['fail'])
      expect(refused.stdout).not.toContain('not-the-secret')
      const agent = new InstalledAgent({
        name: 'hajri-agent (installed)',
        args: [join(installed, 'dist', 'agent', 'main.js'), 'run', '--config', configPath],
        env: { HAJRI_TEST_CLIENT_SECRET: clientSecret, HAJRI_TEST_MQTT_PASSWORD: 'gate-password' },
        logPath: join(dir, 'agent.log'),
      })
      rig.cleanups.push(() => agent.dispose())
      agent.start()
      await waitFor(() => agentStatus(statusPort), 'the installed agent answering /status')
      // While it runs: its status port is the running agent's, which is no failure.
      const during = await doctor(configPath, secrets)
      expect(during.code, during.stdout).toBe(0)
      expect(during.status('status port')).toEqual(['pass'])
      const sent = await hajriAgent(
        'simulate',
        '--mqtt',
        `mqtt://127.0.0.1:${mqttPort}`,
        '--topic',
        'punches/gate',
        '--username',
        'gate',
        '--password-file',
        passwordFile,
        '--employees',
        'E001',
      )
      expect(sent.code, sent.stderr).toBe(0)
      const stored = await waitFor(async () => {
        const punches = await rig.storedPunches(tenantId)
        return punches.length > 0 ? punches : undefined
      }, 'the punch stored by the cloud')
      expect(stored).toHaveLength(1)
      expect(stored[0]).toMatchObject({ employee_code: 'E001', device_id: 'gate' })
    })
  })
})

/** The installed package's main.js as a child process (test/support/child-program.ts). */
class InstalledAgent extends ChildProgram {
  start(): void {
    this.startRun()
  }
}

describe('what `service install` needs on Windows, inside the tarball', () => {
  it("holds node-windows with its winsw.exe, and node-windows' own dependencies", async () => {
    const { stdout } = await exec('tar', ['-tzf', built.tarball], { maxBuffer: 64 * 1024 * 1024 })
    const files = new Set(stdout.split('\n'))
    expect(files.has('package/node_modules/node-windows/bin/winsw/winsw.exe')).toBe(true)
    expect(files.has('package/node_modules/node-windows/lib/daemon.js')).toBe(true)
    expect(
      [...files].some((f) =>
        f.startsWith('package/node_modules/@serialport/bindings-cpp/prebuilds/win32-x64/'),
      ),
    ).toBe(true)
    const nodeWindows = JSON.parse(
      await readFile(join(installed, 'node_modules', 'node-windows', 'package.json'), 'utf8'),
    )
    for (const dependency of Object.keys(nodeWindows.dependencies ?? {})) {
      expect(
        [...files].some(
          (f) =>
            f.startsWith(`package/node_modules/${dependency}/package.json`) ||
            f.startsWith(`package/node_modules/node-windows/node_modules/${dependency}/package.json`),
        ),
        dependency,
      ).toBe(true)
    }
  })

  it('runs no install script that could fetch anything: only the prebuilt binary loader', async () => {
    // npm runs preinstall, install and postinstall of an installed package (prepare only for a
    // git or folder dependency), and `node-gyp rebuild` for one with a binding.gyp and no install
    // script of its own.
    const scripts: Record<string, string> = {}
    for (const dir of await packagesUnder(join(installed, 'node_modules'))) {
      const { name, scripts: own = {} } = await manifest(dir)
      for (const hook of ['preinstall', 'install', 'postinstall']) {
        if (own[hook] !== undefined) scripts[`${name} ${hook}`] = own[hook]
      }
      if (own.install === undefined && own.preinstall === undefined && existsSync(join(dir, 'binding.gyp'))) {
        scripts[`${name} install`] = 'node-gyp rebuild (implicit: binding.gyp)'
      }
    }
    expect(scripts).toEqual(
      Object.fromEntries(
        Object.entries(ALLOWED_INSTALL_SCRIPTS).map(([name, script]) => [`${name} install`, script]),
      ),
    )
  })

  it('runs the agent from the service script once check-config passes', async () => {
    const dir = await mkdtemp(join(scratch, 'windows-script-ok-'))
    const statusPort = await freePort()
    const configPath = join(dir, 'agent.yaml')
    await writeAgentConfig(configPath, {
      siteId: 'pune-plant-1',
      cloudUrl: 'http://127.0.0.1:1',
      clientId: 'hjc_test',
      clientSecretEnv: 'HAJRI_TEST_CLIENT_SECRET',
      spoolDir: join(dir, 'spool'),
      chunkPunches: 100,
      concurrency: 1,
      timeoutSeconds: 5,
      statusPort,
      adms: { port: await freePort(), deviceId: 'canteen', serialNumber: 'CJDE193560303' },
    })
    const script = join(dir, 'hajri-agent-service.cjs')
    await writeFile(
      script,
      renderWindowsServiceScript({
        nodePath: process.execPath,
        mainPath: join(installed, 'dist', 'agent', 'main.js'),
        configPath,
        spoolDir: join(dir, 'spool'),
      }),
    )
    const agent = new InstalledAgent({
      name: 'hajri-agent (service script)',
      args: [script],
      env: { HAJRI_TEST_CLIENT_SECRET: 'cs-Wq8!zR2#pL5vN' },
      logPath: join(dir, 'agent.log'),
    })
    try {
      agent.start()
      const status = await waitFor(() => agentStatus(statusPort), 'the agent started by the service script')
      // In the script's own process, which node-windows' wrapper forks and watches.
      expect(status.agent).toMatchObject({ site: 'pune-plant-1', pid: agent.pid })
    } finally {
      await agent.dispose()
    }
  })

  it('starts the service script only after check-config passes, with its lines on stderr', async () => {
    const dir = await mkdtemp(join(scratch, 'windows-script-'))
    const bad = join(dir, 'agent.yaml')
    await writeFile(bad, 'site:\n  id: pune-plant-1\n')
    const script = join(dir, 'hajri-agent-service.cjs')
    await writeFile(
      script,
      renderWindowsServiceScript({
        nodePath: process.execPath,
        mainPath: join(installed, 'dist', 'agent', 'main.js'),
        configPath: bad,
        spoolDir: join(dir, 'spool'),
      }),
    )
    const run = await runFile(join(bareBin, 'node'), [script], bareEnv())
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('hajri-agent: not started, the configuration has problems')
    expect(run.stderr).toContain(`${bad}: `)
    expect(run.stderr).toContain('cloud')
  })
})
