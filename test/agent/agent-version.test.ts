import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentVersion, findAgentVersion } from '../../agent/agent-version.js'
import { REPO_ROOT } from '../support/child-program.js'
import { runAgent } from './commands/run-agent.js'

/**
 * The agent's version, from the package.json above its own code: the repository's, whether the
 * code runs under tsx (agent/) or built (dist/agent/), and an installed package's, whose
 * package.json is at the package root above dist/.
 */

const run = promisify(execFile)
let repoVersion: string
let dir: string

beforeAll(async () => {
  repoVersion = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')).version
  dir = await mkdtemp(join(tmpdir(), 'hajri-agent-version-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the agent version', () => {
  it("is the repository's, from the sources and from the build beside them", () => {
    expect(agentVersion()).toBe(repoVersion)
    expect(findAgentVersion(pathToFileURL(join(REPO_ROOT, 'agent', 'agent-version.ts')))).toBe(repoVersion)
    expect(findAgentVersion(pathToFileURL(join(REPO_ROOT, 'dist', 'agent', 'agent-version.js')))).toBe(
      repoVersion,
    )
  })

  it("is an installed package's, from the package root, past a package.json without a version", async () => {
    // node_modules/hajri-agent/{package.json, dist/agent/agent-version.js}, inside a project of its own.
    const project = join(dir, 'site')
    const pkg = join(project, 'node_modules', 'hajri-agent')
    await mkdir(join(pkg, 'dist', 'agent'), { recursive: true })
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'site', version: '1.0.0' }))
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: 'hajri-agent', version: '3.2.1-rc.1' }))
    await writeFile(join(pkg, 'dist', 'package.json'), JSON.stringify({ type: 'module' }))
    const module = join(pkg, 'dist', 'agent', 'agent-version.js')
    expect(findAgentVersion(pathToFileURL(module))).toBe('3.2.1-rc.1')
    expect(findAgentVersion(module)).toBe('3.2.1-rc.1')
  })

  it('is printed by --version and -v', async () => {
    for (const flag of ['--version', '-v'])
      expect(await runAgent(dir, {}, flag)).toEqual({ code: 0, stdout: `${repoVersion}\n`, stderr: '' })
  })

  it('is printed by the program itself, run from its sources as a shell would', async () => {
    // From a directory of its own: the version must not depend on where it is started.
    const tsx = import.meta.resolve('tsx')
    const { stdout } = await run(
      process.execPath,
      ['--import', tsx, join(REPO_ROOT, 'agent', 'main.ts'), '-v'],
      {
        cwd: dir,
      },
    )
    expect(stdout).toBe(`${repoVersion}\n`)
  })
})
