import type { AgentIo } from '../../../agent/commands/agent-command.js'
import { runAgentCli } from '../../../agent/main.js'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs hajri-agent in-process, as a shell would, capturing what it writes. */
export async function runAgent(cwd: string, env: NodeJS.ProcessEnv, ...argv: string[]): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const io: AgentIo = {
    env,
    cwd,
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    isTty: false,
  }
  const code = await runAgentCli(argv, io)
  return { code, stdout, stderr }
}
