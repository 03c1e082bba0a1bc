/**
 * Runs a command-line entry point in-process, as a shell would, and keeps what it writes. Both
 * programs' entry points (`runCli` of hajri-cloud, `runAgentCli` of hajri-agent) take their
 * arguments and an io object that says where to read settings and write output, so a test needs
 * no child process to run a command.
 */

/** The io object an entry point is given: a superset of what either program's CLI reads. */
export interface CapturingIo {
  env: NodeJS.ProcessEnv
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** Never a terminal: no colour, no progress bars. */
  isTty: boolean
}

/** A CLI entry point: its arguments and io; resolves to the exit status. */
export type CliEntry = (argv: readonly string[], io: CapturingIo) => Promise<number>

/** Where the command runs: its environment and working directory. */
export interface CliSurroundings {
  env: NodeJS.ProcessEnv
  cwd: string
}

/** A finished run. A class, so that `json` is no field of its own and a test may compare a whole result with toEqual. */
export class CliResult {
  constructor(
    readonly code: number,
    readonly stdout: string,
    readonly stderr: string,
  ) {}

  /** stdout read as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T {
    return JSON.parse(this.stdout) as T
  }
}

/** A command still running: its exit status to come, and what it has written so far. */
export interface RunningCli {
  done: Promise<number>
  stdout: () => string
  stderr: () => string
}

/** Starts `entry` with `argv`; what it writes can be read while it runs (for commands that keep running). */
export function startCli(
  entry: CliEntry,
  argv: readonly string[],
  { env, cwd }: CliSurroundings,
): RunningCli {
  let stdout = ''
  let stderr = ''
  const done = entry(argv, {
    env,
    cwd,
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    isTty: false,
  })
  return { done, stdout: () => stdout, stderr: () => stderr }
}

/** Runs `entry` with `argv` to its end: the exit status and everything it wrote. */
export async function captureCli(
  entry: CliEntry,
  argv: readonly string[],
  surroundings: CliSurroundings,
): Promise<CliResult> {
  const running = startCli(entry, argv, surroundings)
  const code = await running.done
  return new CliResult(code, running.stdout(), running.stderr())
}
