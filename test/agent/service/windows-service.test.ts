/**
 * The parts of WindowsService (agent/service/windows-service.ts) that are files, tested on any
 * platform: what --print shows, and `service logs` reading the tail of node-windows' log files.
 * Registering the service needs Windows; test/system/agent-package/agent-package.test.ts checks
 * that the tarball holds node-windows and its winsw.exe, and runs the service script.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WindowsService } from '../../../agent/service/windows-service.js'
import { renderWindowsServiceScript } from '../../../agent/service/windows-service-script.js'

let dataDir: string
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'hajri-windows-service-'))
})
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

function windowsService() {
  const out = { stdout: '', stderr: '' }
  const calls: string[] = []
  const service = new WindowsService({
    dataDir,
    run: async (program, args) => {
      calls.push([program, ...args].join(' '))
      return 0
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
  return { service, out, calls }
}

describe('WindowsService', () => {
  it('--print shows the service script and changes nothing', async () => {
    const { service, out, calls } = windowsService()
    const plan = {
      nodePath: 'C:\\Program Files\\nodejs\\node.exe',
      mainPath: 'C:\\Program Files\\hajri-agent\\node_modules\\hajri-agent\\dist\\agent\\main.js',
      configPath: 'C:\\ProgramData\\hajri\\agent.yaml',
      spoolDir: 'C:\\ProgramData\\hajri\\spool',
    }
    expect(await service.install(plan, { printOnly: true })).toBe(0)
    expect(out.stdout).toContain(renderWindowsServiceScript(plan))
    // The paths are JavaScript strings in the script: backslashes escaped.
    expect(out.stdout).toContain('const config = "C:\\\\ProgramData\\\\hajri\\\\agent.yaml"')
    expect(calls).toEqual([])
  })

  it('service logs prints the last lines of each log file of the daemon directory', async () => {
    const { service, out } = windowsService()
    await mkdir(service.logDir, { recursive: true })
    await writeFile(join(service.logDir, 'hajriagent.out.log'), 'one\r\ntwo\r\nthree\r\n')
    await writeFile(join(service.logDir, 'hajriagent.err.log'), 'devices: must be a list\n')
    await writeFile(join(service.logDir, 'hajriagent.xml'), '<service/>')
    expect(await service.logs({ lines: 2, follow: false })).toBe(0)
    expect(out.stdout).toBe(
      `==> ${join(service.logDir, 'hajriagent.err.log')} <==\ndevices: must be a list\n` +
        `==> ${join(service.logDir, 'hajriagent.out.log')} <==\ntwo\nthree\n`,
    )
  })

  it('service logs says when there is no log yet', async () => {
    const service = new WindowsService({
      dataDir: join(dataDir, 'none'),
      run: async () => 0,
      out: { stdout: () => {}, stderr: () => {} },
    })
    await expect(service.logs({ lines: 10, follow: false })).rejects.toMatchObject({
      code: 'SERVICE_NOT_INSTALLED',
    })
  })
})
