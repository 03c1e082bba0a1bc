/**
 * Command-line tools the deploy/ tests run where users have them (`docker compose
 * config` validates compose.yaml, and `systemd-analyze verify` accepts the units, where those tools
 * exist). Like the services in services.ts: a missing tool skips its tests with a one-line reason,
 * unless HAJRI_TEST_REQUIRE_ALL=1 (CI), where that is a failure instead.
 */
import { execFile } from 'node:child_process'
import { REQUIRE_ALL } from './services.js'

export interface ToolRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs a command to its end (never throws on a non-zero exit; rejects only if it cannot start). */
export function runTool(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        env: options.env ?? process.env,
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = (err as { code?: unknown } | null)?.code
        if (err && typeof code !== 'number') {
          reject(err)
          return
        }
        resolve({ code: typeof code === 'number' ? code : 0, stdout, stderr })
      },
    )
  })
}

export interface ToolAvailability<T> {
  /** Undefined when the tool is there; else why its tests are skipped. */
  skipReason: string | undefined
  tool: T | undefined
}

async function find<T>(name: string, hint: string, probe: () => Promise<T>): Promise<ToolAvailability<T>> {
  try {
    return { skipReason: undefined, tool: await probe() }
  } catch (err) {
    const reason = `${name} not found (${(err as Error).message}); ${hint}`
    if (REQUIRE_ALL) throw new Error(`HAJRI_TEST_REQUIRE_ALL=1 but ${reason}`)
    console.warn(`skipping ${name} tests: ${reason}`)
    return { skipReason: reason, tool: undefined }
  }
}

export interface SystemdAnalyze {
  /** `--recursive-errors=no` where this version has it (systemd 250+): report this unit's problems, not the host's other units'. */
  ownErrorsOnly: string[]
}

let systemdAnalyze: Promise<ToolAvailability<SystemdAnalyze>> | undefined

export function systemdAnalyzeAvailability(): Promise<ToolAvailability<SystemdAnalyze>> {
  systemdAnalyze ??= find('systemd-analyze', 'install systemd', async () => {
    const help = await runTool('systemd-analyze', ['--help'])
    if (help.code !== 0) throw new Error(`systemd-analyze --help exited with ${help.code}`)
    return { ownErrorsOnly: help.stdout.includes('--recursive-errors') ? ['--recursive-errors=no'] : [] }
  })
  return systemdAnalyze
}

export interface ComposeTool {
  /** `docker` with `compose` first (v2, the plugin), or `docker-compose` (v1). */
  command: string
  args: string[]
  version: string
}

let compose: Promise<ToolAvailability<ComposeTool>> | undefined

/** Docker Compose: the v2 plugin (`docker compose`) when there, else v1 (`docker-compose`). */
export function composeAvailability(): Promise<ToolAvailability<ComposeTool>> {
  compose ??= find(
    'Docker Compose',
    'install the docker-compose package, or the Docker Compose plugin',
    async () => {
      const candidates: ComposeTool[] = [
        { command: 'docker', args: ['compose'], version: '' },
        { command: 'docker-compose', args: [], version: '' },
      ]
      const failures: string[] = []
      for (const candidate of candidates) {
        const name = [candidate.command, ...candidate.args].join(' ')
        try {
          const run = await runTool(candidate.command, [...candidate.args, 'version'])
          if (run.code === 0) return { ...candidate, version: run.stdout.split('\n')[0]?.trim() ?? '' }
          failures.push(`${name}: exit ${run.code}`)
        } catch (err) {
          failures.push(`${name}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
        }
      }
      throw new Error(failures.join('; '))
    },
  )
  return compose
}
