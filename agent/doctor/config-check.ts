import { ConfigFileError, formatProblem } from '../config/config-file-error.js'
import { configWarnings } from '../config/config-warnings.js'
import { loadAgentConfig } from '../config/load.js'
import type { AgentConfig } from '../config/schema.js'
import { type CheckOutcome, fail, pass, warn } from './check-result.js'

/** Problems shown on the report line; `check-config` lists them all. */
const SHOWN_PROBLEMS = 3

/**
 * The configuration, read exactly as `run` and `check-config` read it (config/load.ts). A file that
 * cannot be used fails this check, and the checks that need it are skipped.
 */
export async function checkConfig(
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<{ outcome: CheckOutcome; config?: AgentConfig }> {
  let config: AgentConfig
  try {
    config = await loadAgentConfig(file, env)
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    const shown = err.problems.slice(0, SHOWN_PROBLEMS).map(formatProblem).join('; ')
    const more =
      err.problems.length > SHOWN_PROBLEMS ? ` (and ${err.problems.length - SHOWN_PROBLEMS} more)` : ''
    return {
      outcome: fail(
        `${err.problems.length} problem(s): ${shown}${more}`,
        `the agent would not start: fix the file (every problem: hajri-agent check-config --config ${file})`,
      ),
    }
  }
  const summary = `site ${config.site.id}, ${config.devices.length} device(s)`
  const warnings = configWarnings(config)
  if (warnings.length > 0) {
    return {
      outcome: warn(
        `${summary}; ${warnings.length} warning(s): ${warnings.map(formatProblem).join('; ')}`,
        'the agent runs with these settings, but see hajri-agent check-config for what each warning leaves open',
      ),
      config,
    }
  }
  return { outcome: pass(summary), config }
}
