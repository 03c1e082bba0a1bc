import { execFile } from 'node:child_process'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Compiles hajri-agent with tsc into `dir`, as `npm run build` makes the `hajri-agent` bin
 * (dist/agent/main.js), without touching the repository's dist/ or its build info. Returns the
 * entry point. tsx keeps its own module-hook thread and transformed sources in the process, tens
 * of MB of RSS that no installed agent carries: the compiled agent is what deploy/ runs.
 */
export async function compileAgent(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  // Packages (and @types for tsc) resolve from here, and the emitted .js files are ESM.
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')
  const tsconfig = {
    extends: join(REPO_ROOT, 'tsconfig.json'),
    compilerOptions: {
      rootDir: REPO_ROOT,
      outDir: join(dir, 'out'),
      noEmit: false,
      incremental: false,
      sourceMap: false,
    },
    // The entry point; tsc follows its imports, the commands' dynamic ones included.
    files: [join(REPO_ROOT, 'agent', 'main.ts')],
    include: [],
  }
  const project = join(dir, 'tsconfig.json')
  await writeFile(project, JSON.stringify(tsconfig, null, 2))
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  await promisify(execFile)(process.execPath, [tsc, '-p', project], { cwd: dir })
  return join(dir, 'out', 'agent', 'main.js')
}

/** How the benchmarks start the agent: the command shown in their method, and AgentProcess options. */
export interface AgentRuntime {
  command: string
  compiledEntry: string | undefined
  nodeFlags: string[]
}

/**
 * The runtime HAJRI_BENCH_AGENT_RUNTIME asks for (`compiled` builds into `dir` first), with the
 * node flags of the settings (by default deploy/hajri-agent.service's).
 */
export async function agentRuntime(
  settings: { runtime: 'tsx' | 'compiled'; nodeFlags: string[] },
  dir: string,
): Promise<AgentRuntime> {
  const flags = settings.nodeFlags.map((flag) => `${flag} `).join('')
  if (settings.runtime === 'tsx')
    return {
      command: `\`node ${flags}--import tsx agent/main.ts run --config agent.yaml\``,
      compiledEntry: undefined,
      nodeFlags: settings.nodeFlags,
    }
  return {
    command: `\`node ${flags}agent/main.js run --config agent.yaml\` (compiled by tsc, no tsx)`,
    compiledEntry: await compileAgent(dir),
    nodeFlags: settings.nodeFlags,
  }
}
