/**
 * The systemd units in deploy/: `systemd-analyze verify` accepts each unit, where that tool
 * exists. verify exits 0 even when it warns (an unknown key is ignored, not an error),
 * so the tests require its output to be empty: a warning is a setting systemd silently drops.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { runTool, systemdAnalyzeAvailability } from '../support/tools.js'
import { execForm, parseDockerfile } from './parse-dockerfile.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
const UNITS = ['hajri-agent.service', 'hajri-cloud.service'] as const
const INSTALL_DIR = '/opt/hajri/'

const systemd = await systemdAnalyzeAvailability()
const scratch = mkdtempSync(join(tmpdir(), 'hajri-units-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

function unitText(unit: string): string {
  return readFileSync(join(REPO, 'deploy', unit), 'utf8')
}

/** The value lines of a key in a unit file (no continuation lines in ours). */
function values(text: string, key: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1))
}

/** The key=value lines of one section. */
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

/**
 * verify checks that each Exec line's program exists and is executable. The units name
 * /usr/bin/node (Debian's and NodeSource's nodejs packages put it there); a CI runner or a
 * developer's machine may have Node elsewhere (nvm, /usr/local/bin), so the copy verified names
 * the node running this test instead. Nothing else in the unit is changed.
 */
async function verify(name: string, text: string): Promise<{ code: number; output: string }> {
  expect(text).toContain('/usr/bin/node ')
  const dir = mkdtempSync(join(scratch, 'unit-'))
  const path = join(dir, name)
  writeFileSync(path, text.replaceAll('/usr/bin/node ', `${process.execPath} `))
  const tool = systemd.tool as NonNullable<typeof systemd.tool>
  const run = await runTool('systemd-analyze', ['verify', ...tool.ownErrorsOnly, path])
  return { code: run.code, output: `${run.stdout}${run.stderr}`.replaceAll(dir, '<dir>').trim() }
}

describe.skipIf(systemd.skipReason !== undefined)(
  `systemd-analyze verify${systemd.skipReason ? ` (skipped: ${systemd.skipReason})` : ''}`,
  () => {
    for (const unit of UNITS) {
      it(`accepts deploy/${unit} with no warning at all`, async () => {
        expect(await verify(unit, unitText(unit))).toEqual({ code: 0, output: '' })
      })
    }

    it('reports a key in the wrong section, which the tests above would catch', async () => {
      // The agent unit as it once was: StartLimitIntervalSec in [Service], where systemd
      // ignores it (and so gives up restarting after 5 failures in 10 s).
      const text = unitText('hajri-agent.service')
      expect(section(text, 'Unit')).toContain('StartLimitIntervalSec=0')
      const misplaced = text
        .replace('\nStartLimitIntervalSec=0\n', '\n')
        .replace('\nRestartSec=2\n', '\nRestartSec=2\nStartLimitIntervalSec=0\n')
      const { output } = await verify('hajri-agent.service', misplaced)
      expect(output).toContain("Unknown key 'StartLimitIntervalSec' in section [Service]")
    })
  },
)

describe('what the units run', () => {
  it('exists in the build output: each node script an Exec line names is in dist/', () => {
    for (const unit of UNITS) {
      const lines = [...values(unitText(unit), 'ExecStartPre'), ...values(unitText(unit), 'ExecStart')]
      expect(lines.length).toBeGreaterThan(0)
      for (const line of lines) {
        const script = line.split(/\s+/).find((word) => word.startsWith(INSTALL_DIR))
        expect(script, `${unit}: ${line}`).toBeDefined()
        const built = join(REPO, (script as string).slice(INSTALL_DIR.length))
        expect(existsSync(built), `${built} (run npm run build)`).toBe(true)
      }
    }
  })

  it('is, for the cloud, the command the container image runs', () => {
    const runtime = parseDockerfile(readFileSync(join(REPO, 'deploy/Dockerfile'), 'utf8')).at(-1)
    const cmd = runtime?.instructions.filter((i) => i.keyword === 'CMD').at(-1)
    expect(cmd).toBeDefined()
    const [program, script, ...args] = execForm(cmd?.args as string)
    const [execStart] = values(unitText('hajri-cloud.service'), 'ExecStart')
    expect(program).toBe('node')
    expect(execStart).toBe(`/usr/bin/node ${INSTALL_DIR}${script} ${args.join(' ')}`)
  })

  it('is stopped the same way by systemd and Docker: SIGTERM, then a grace period', () => {
    const runtime = parseDockerfile(readFileSync(join(REPO, 'deploy/Dockerfile'), 'utf8')).at(-1)
    const stopSignal = runtime?.instructions.find((i) => i.keyword === 'STOPSIGNAL')?.args ?? 'SIGTERM'
    const compose = readFileSync(join(REPO, 'deploy/compose.yaml'), 'utf8')
    const cloud = unitText('hajri-cloud.service')
    expect(values(cloud, 'KillSignal')).toEqual([stopSignal])
    const [timeout] = values(cloud, 'TimeoutStopSec')
    expect(compose).toContain(`stop_grace_period: ${timeout}s`)
  })
})
