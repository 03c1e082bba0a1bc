import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { REPO_ROOT, spawnTracked, stopChild } from '../support/child-program.js'
import type { ZkReaderJob, ZkReaderMessage, ZkReaderReport } from './agent-zk-messages.js'

const READER_SOURCE = fileURLToPath(new URL('./agent-zk-reader.ts', import.meta.url))
/** A full read of 4 MB takes well under a second; a stuck one ends the benchmark, not the machine. */
const JOB_TIMEOUT_MS = 60_000

/** How the reading child is started: the command shown in the method, and what to spawn. */
export interface ZkReaderRuntime {
  command: string
  nodeArgs: string[]
  entry: string
}

/**
 * The reader compiled by tsc into `dir` (its own small import graph: the ZK client and
 * agent-proc-stats.ts), as compileAgent() builds the agent, or the source through tsx. tsx keeps a
 * module-hook thread and the transformed sources in the process, tens of MB no installed agent
 * carries (agent-compile.ts): compiled, the reader's RSS is the client's and Node's only.
 */
export async function zkReaderRuntime(
  settings: { runtime: 'tsx' | 'compiled'; nodeFlags: string[] },
  dir: string,
): Promise<ZkReaderRuntime> {
  const flags = settings.nodeFlags.map((flag) => `${flag} `).join('')
  if (settings.runtime === 'tsx') {
    return {
      command: `\`node ${flags}--import tsx test/bench/agent-zk-reader.ts\``,
      nodeArgs: [...settings.nodeFlags, '--import', 'tsx'],
      entry: READER_SOURCE,
    }
  }
  await mkdir(dir, { recursive: true })
  // @types resolve from here for tsc, and the emitted .js files are ESM.
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')
  const project = join(dir, 'tsconfig.json')
  await writeFile(
    project,
    JSON.stringify({
      extends: join(REPO_ROOT, 'tsconfig.json'),
      compilerOptions: {
        rootDir: REPO_ROOT,
        outDir: join(dir, 'out'),
        noEmit: false,
        incremental: false,
        sourceMap: false,
      },
      files: [READER_SOURCE],
      include: [],
    }),
  )
  const tsc = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  await promisify(execFile)(process.execPath, [tsc, '-p', project], { cwd: dir })
  return {
    command: `\`node ${flags}agent-zk-reader.js\` (compiled by tsc, no tsx)`,
    nodeArgs: [...settings.nodeFlags],
    entry: join(dir, 'out', 'test', 'bench', 'agent-zk-reader.js'),
  }
}

/** Runs one job in a fresh reading process and returns its report; its failure is thrown. */
export async function runZkReader(runtime: ZkReaderRuntime, job: ZkReaderJob): Promise<ZkReaderReport> {
  const child = spawnTracked(process.execPath, [...runtime.nodeArgs, runtime.entry, JSON.stringify(job)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  // 'close', not 'exit': by then the IPC channel has delivered everything the child sent.
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>
  let message: ZkReaderMessage | undefined
  child.on('message', (m: ZkReaderMessage) => {
    message = m
  })
  const timer = setTimeout(() => void stopChild(child, 'SIGKILL', 1_000), JOB_TIMEOUT_MS)
  try {
    const [code, signal] = await exited
    if (message?.type === 'done') return message
    if (message?.type === 'failed')
      throw new Error(`the ${job.kind} ${job.transport} read failed: ${message.error}`)
    throw new Error(
      `the ${job.kind} ${job.transport} reader exited (code ${code}, signal ${signal}) without a report`,
    )
  } finally {
    clearTimeout(timer)
  }
}
