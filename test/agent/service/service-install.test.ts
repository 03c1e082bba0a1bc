/**
 * `hajri-agent service install` on Linux (docs/decisions/0086-agent-package.md), under a --root
 * directory so no systemd as PID 1 is needed: the unit it writes has deploy/hajri-agent.service's
 * settings with this package's paths, `systemd-analyze verify` accepts it (where that tool exists),
 * and a configuration file with mistakes installs nothing.
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { SERVICE_ROOT_ENV } from '../../../agent/commands/service-command.js'
import { ServiceError } from '../../../agent/service/service-manager.js'
import { SystemdService } from '../../../agent/service/systemd-service.js'
import { UNIT_PATH } from '../../../agent/service/systemd-unit.js'
import { serviceNodeFlags } from '../../bench/agent-service-flags.js'
import { runTool, systemdAnalyzeAvailability } from '../../support/tools.js'
import { runAgent } from '../commands/run-agent.js'
import { minimalDoc } from '../config/config-fixture.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** What the command names as the package's entry point when run from the sources. */
const MAIN = join(REPO, 'agent', 'main.js')

const systemd = await systemdAnalyzeAvailability()

let dir: string
/** A space in the path: the Exec lines must quote it. */
let configDir: string
let configPath: string
let spoolDir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-service-'))
  configDir = join(dir, 'site config')
  await mkdir(configDir)
  spoolDir = join(dir, 'spool')
  configPath = join(configDir, 'agent.yaml')
  await writeYaml(configPath, { ...minimalDoc(), spool: { dir: spoolDir } })
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function writeYaml(path: string, doc: Record<string, unknown>): Promise<void> {
  await writeFile(path, stringify(doc))
}

/** The key=value lines of one section of a unit. */
function section(text: string, name: string): string[] {
  const lines: string[] = []
  let current: string | undefined
  for (const line of text.split('\n')) {
    const header = /^\[(.+)\]$/.exec(line)
    if (header) current = header[1]
    else if (current === name && /^[A-Za-z]+=/.test(line)) lines.push(line)
  }
  return lines
}

async function installUnder(root: string, config = configPath) {
  const result = await runAgent(dir, {}, 'service', 'install', '--config', config, '--root', root)
  const unitFile = join(root, UNIT_PATH)
  return { result, unitFile, unit: existsSync(unitFile) ? await readFile(unitFile, 'utf8') : undefined }
}

describe('hajri-agent service install --root', () => {
  it("writes a unit that runs this package's node and main.js on the file, check-config first", async () => {
    const root = join(dir, 'root-paths')
    const { result, unit } = await installUnder(root)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`wrote ${join(root, UNIT_PATH)}`)
    const service = section(unit as string, 'Service')
    const quoted = `"${configPath}"`
    expect(service).toContain(`ExecStartPre=${process.execPath} ${MAIN} check-config --config ${quoted}`)
    expect(service).toContain(
      `ExecStart=${process.execPath} --max-old-space-size=64 --max-semi-space-size=4 ${MAIN} run --config ${quoted}`,
    )
    expect(service).toContain(`ReadWritePaths=${spoolDir}`)
    expect(service).toEqual(
      expect.arrayContaining(['Restart=always', 'User=hajri', 'Group=hajri', 'SupplementaryGroups=dialout']),
    )
    // A spool outside /var/lib/hajri-agent: no StateDirectory= (install makes the directory).
    expect(service.some((line) => line.startsWith('StateDirectory='))).toBe(false)
  })

  it('has every setting of deploy/hajri-agent.service but those naming paths', async () => {
    const { unit, unitFile } = await installUnder(join(dir, 'root-same'))
    expect(serviceNodeFlags(unitFile)).toEqual(serviceNodeFlags())
    const deployed = readFileSync(join(REPO, 'deploy', 'hajri-agent.service'), 'utf8')
    const pathSettings =
      /^(ExecStartPre|ExecStart|ReadWritePaths|StateDirectory|StateDirectoryMode|ConfigurationDirectory)=/
    for (const name of ['Unit', 'Service', 'Install']) {
      const expected = section(deployed, name).filter((line) => !pathSettings.test(line))
      expect(expected.length).toBeGreaterThan(0)
      expect(section(unit as string, name), `[${name}]`).toEqual(expect.arrayContaining(expected))
    }
  })

  it('keeps StateDirectory= for a spool under /var/lib/hajri-agent, as deploy/ has it', async () => {
    const path = join(configDir, 'state.yaml')
    await writeYaml(path, { ...minimalDoc(), spool: { dir: '/var/lib/hajri-agent/spool' } })
    const { unit } = await installUnder(join(dir, 'root-state'), path)
    const service = section(unit as string, 'Service')
    expect(service).toContain('StateDirectory=hajri-agent')
    expect(service).toContain('ReadWritePaths=/var/lib/hajri-agent/spool')
  })

  it(`takes the root from ${SERVICE_ROOT_ENV} too, and uninstall --root removes the unit`, async () => {
    const root = join(dir, 'root-env')
    const installed = await runAgent(
      dir,
      { [SERVICE_ROOT_ENV]: root },
      'service',
      'install',
      '-c',
      configPath,
    )
    expect(installed.code, installed.stderr).toBe(0)
    expect(existsSync(join(root, UNIT_PATH))).toBe(true)
    const removed = await runAgent(dir, {}, 'service', 'uninstall', '--root', root)
    expect(removed.code, removed.stderr).toBe(0)
    expect(existsSync(join(root, UNIT_PATH))).toBe(false)
  })

  it('--print prints the unit and writes nothing', async () => {
    const root = join(dir, 'root-print')
    const printed = await runAgent(
      dir,
      {},
      'service',
      'install',
      '--config',
      configPath,
      '--print',
      '--root',
      root,
    )
    expect(printed.code, printed.stderr).toBe(0)
    expect(section(printed.stdout, 'Service')).toContain('Restart=always')
    expect(existsSync(root)).toBe(false)
    const dryRun = await runAgent(dir, {}, 'service', 'install', '--config', configPath, '--dry-run')
    expect(dryRun.stdout).toBe(printed.stdout)
  })

  it("refuses a configuration file with mistakes: check-config's lines, exit 2, nothing written", async () => {
    const bad = join(configDir, 'bad.yaml')
    const doc = minimalDoc()
    doc.cloud.url = 'ftp://hajri.example.com'
    doc.devices = [{ id: 'a', serial: { path: '/dev/ttyS0', baudRate: 10 } }]
    await writeYaml(bad, doc)
    const root = join(dir, 'root-bad')
    const { result, unit } = await installUnder(root, bad)
    expect(result.code).toBe(2)
    expect(unit).toBeUndefined()
    const checked = await runAgent(dir, {}, 'check-config', '--config', bad)
    const [header, ...problems] = result.stderr.trimEnd().split('\n')
    expect(header).toBe(`hajri-agent: ${bad}: 2 problems; the service is not installed`)
    expect(problems).toEqual(checked.stderr.trimEnd().split('\n').slice(1))
    expect(problems).toHaveLength(2)
  })

  it('needs --config', async () => {
    const result = await runAgent(dir, {}, 'service', 'install', '--root', join(dir, 'root-none'))
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('service install needs --config FILE')
  })
})

describe('SystemdService on the running system', () => {
  it('refuses to install or uninstall when not root, and runs nothing', async () => {
    const calls: string[] = []
    const service = new SystemdService({
      root: undefined,
      isRoot: false,
      run: async (program, args) => {
        calls.push([program, ...args].join(' '))
        return 0
      },
      out: { stdout: () => {}, stderr: () => {} },
    })
    const plan = { nodePath: process.execPath, mainPath: MAIN, configPath, spoolDir }
    await expect(service.install(plan, { printOnly: false })).rejects.toMatchObject({
      code: 'SERVICE_NOT_ROOT',
      message: expect.stringContaining('must run as root'),
    })
    await expect(service.uninstall()).rejects.toBeInstanceOf(ServiceError)
    expect(calls).toEqual([])
  })
})

describe.skipIf(systemd.skipReason !== undefined)(
  `systemd-analyze verify${systemd.skipReason ? ` (skipped: ${systemd.skipReason})` : ''}`,
  () => {
    it('accepts the unit written, with no warning at all', async () => {
      const { unitFile } = await installUnder(join(dir, 'root-verify'))
      const tool = systemd.tool as NonNullable<typeof systemd.tool>
      const run = await runTool('systemd-analyze', ['verify', ...tool.ownErrorsOnly, unitFile])
      expect({ code: run.code, output: `${run.stdout}${run.stderr}`.trim() }).toEqual({ code: 0, output: '' })
    })

    it('reports a unit whose program does not exist, which the test above would catch', async () => {
      const { unitFile } = await installUnder(join(dir, 'root-verify-missing'))
      const text = await readFile(unitFile, 'utf8')
      await writeFile(unitFile, text.replaceAll(`${process.execPath} `, '/nonexistent/node '))
      const tool = systemd.tool as NonNullable<typeof systemd.tool>
      const run = await runTool('systemd-analyze', ['verify', ...tool.ownErrorsOnly, unitFile])
      expect(`${run.stdout}${run.stderr}`).toContain('/nonexistent/node')
    })
  },
)
