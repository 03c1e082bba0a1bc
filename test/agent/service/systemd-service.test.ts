/**
 * SystemdService on the running system (agent/service/systemd-service.ts), with the programs it
 * runs (id, useradd, chown, runuser, systemctl) recorded instead of run and the unit written to a
 * file of the test's: the order of the steps, and what stops an install before any of them.
 * test/agent/service/service-install.test.ts covers the unit itself.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServicePlan } from '../../../agent/service/service-manager.js'
import { SystemdService } from '../../../agent/service/systemd-service.js'
import { renderSystemdUnit } from '../../../agent/service/systemd-unit.js'

/**
 * Outside /tmp (PrivateTmp= hides it from the service, and install refuses it): the ignored
 * test-results/ of the checkout, or, for a checkout that is itself under /tmp (a CI clone), a
 * directory in the home directory.
 */
const CHECKOUT_RESULTS = fileURLToPath(new URL('../../../test-results/', import.meta.url))
const RESULTS = /^\/(var\/)?tmp(\/|$)/.test(CHECKOUT_RESULTS)
  ? join(homedir(), '.cache', 'hajri-test-results')
  : CHECKOUT_RESULTS

let dir: string
let plan: ServicePlan
beforeAll(async () => {
  await mkdir(RESULTS, { recursive: true })
  dir = await mkdtemp(join(RESULTS, 'systemd-service-'))
  const mainPath = join(dir, 'package', 'dist', 'agent', 'main.js')
  await mkdir(join(dir, 'package', 'dist', 'agent'), { recursive: true })
  await writeFile(mainPath, '')
  plan = {
    nodePath: process.execPath,
    mainPath,
    configPath: join(dir, 'agent.yaml'),
    spoolDir: join(dir, 'spool'),
  }
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

function recorder(exitCodes: Record<string, number> = {}) {
  const calls: string[] = []
  const out = { stdout: '', stderr: '' }
  const service = (unitPath: string, isRoot = true) =>
    new SystemdService({
      root: undefined,
      isRoot,
      unitPath,
      run: async (program, args) => {
        const call = [program, ...args].join(' ')
        calls.push(call)
        return exitCodes[call] ?? 0
      },
      out: {
        stdout: (text) => {
          out.stdout += text
        },
        stderr: (text) => {
          out.stderr += text
        },
      },
    })
  return { calls, out, service }
}

describe('SystemdService.install on the running system', () => {
  it('creates the user, the spool, checks the file as that user, then writes, enables and restarts', async () => {
    const { calls, out, service } = recorder({ 'id -u hajri': 1 })
    const unitPath = join(dir, 'first.service')
    expect(await service(unitPath).install(plan, { printOnly: false })).toBe(0)
    expect(calls).toEqual([
      'id -u hajri',
      'useradd --system --user-group --groups dialout --home-dir /var/lib/hajri-agent --no-create-home --shell /usr/sbin/nologin hajri',
      `chown hajri:hajri ${plan.spoolDir}`,
      `runuser -u hajri -- ${plan.nodePath} ${plan.mainPath} check-config --config ${plan.configPath}`,
      'systemctl daemon-reload',
      'systemctl enable hajri-agent',
      'systemctl restart hajri-agent',
    ])
    expect(existsSync(plan.spoolDir)).toBe(true)
    expect(await readFile(unitPath, 'utf8')).toBe(renderSystemdUnit(plan))
    expect(out.stdout).toContain('created the system user hajri')
  })

  it('keeps an existing user, and writes nothing when the file fails as that user', async () => {
    const check = `runuser -u hajri -- ${plan.nodePath} ${plan.mainPath} check-config --config ${plan.configPath}`
    const { calls, service } = recorder({ [check]: 2 })
    const unitPath = join(dir, 'unreadable.service')
    await expect(service(unitPath).install(plan, { printOnly: false })).rejects.toMatchObject({
      code: 'SERVICE_COMMAND_FAILED',
      message: expect.stringContaining('check-config failed as the hajri user'),
    })
    expect(calls).toEqual(['id -u hajri', `chown hajri:hajri ${plan.spoolDir}`, check])
    expect(existsSync(unitPath)).toBe(false)
  })

  it('refuses paths under /tmp, which PrivateTmp= hides from the service, before running anything', async () => {
    const { calls, service } = recorder()
    const inTmp = { ...plan, configPath: join(tmpdir(), 'agent.yaml') }
    await expect(service(join(dir, 'tmp.service')).install(inTmp, { printOnly: false })).rejects.toThrow(
      /configuration file is under \/tmp .*PrivateTmp=true/,
    )
    expect(calls).toEqual([])
  })

  it('refuses a main.js that does not exist (a checkout run through tsx)', async () => {
    const { calls, service } = recorder()
    const missing = { ...plan, mainPath: join(dir, 'nowhere', 'main.js') }
    await expect(
      service(join(dir, 'missing.service')).install(missing, { printOnly: false }),
    ).rejects.toThrow(/does not exist: run service install from the installed package/)
    expect(calls).toEqual([])
  })
})

describe('SystemdService.uninstall on the running system', () => {
  it('stops, disables and removes the unit, then reloads', async () => {
    const unitPath = join(dir, 'installed.service')
    await writeFile(unitPath, renderSystemdUnit(plan))
    const { calls, service } = recorder()
    expect(await service(unitPath).uninstall()).toBe(0)
    expect(calls).toEqual(['systemctl disable --now hajri-agent', 'systemctl daemon-reload'])
    expect(existsSync(unitPath)).toBe(false)
  })

  it('says so when there is nothing to uninstall', async () => {
    const { calls, service } = recorder()
    await expect(service(join(dir, 'never.service')).uninstall()).rejects.toMatchObject({
      code: 'SERVICE_NOT_INSTALLED',
    })
    expect(calls).toEqual([])
  })
})

describe('status and logs', () => {
  it('are systemctl status and journalctl of the unit', async () => {
    const { calls, service } = recorder({ 'systemctl status --no-pager hajri-agent': 3 })
    const systemd = service(join(dir, 'any.service'), false)
    expect(await systemd.status()).toBe(3)
    expect(await systemd.logs({ lines: 50, follow: true })).toBe(0)
    expect(calls).toEqual([
      'systemctl status --no-pager hajri-agent',
      'journalctl --unit hajri-agent --lines 50 --no-pager --follow',
    ])
  })
})
