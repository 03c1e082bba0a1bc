import { runAgentCli } from '../../../agent/main.js'
import { type CliResult, captureCli } from '../../support/cli-capture.js'

/** Runs hajri-agent in-process, as a shell would, capturing what it writes. */
export function runAgent(cwd: string, env: NodeJS.ProcessEnv, ...argv: string[]): Promise<CliResult> {
  return captureCli(runAgentCli, argv, { env, cwd })
}
