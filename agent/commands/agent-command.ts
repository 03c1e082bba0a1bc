/** Where an agent command reads its settings and writes its output; the process's own, or a test's. */
export interface AgentIo {
  env: NodeJS.ProcessEnv
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
  /** Whether stdout is a terminal (colour, progress bars, pretty logs). */
  isTty: boolean
}

/** One `hajri-agent` command: its arguments after the command name; resolves to the exit status. */
export type AgentCommand = (args: readonly string[], io: AgentIo) => Promise<number>

/** A mistake in how the command was called: exit status 2. */
export class AgentUsageError extends Error {}
