import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { getHeapStatistics } from 'node:v8'
import { createAgentLogger } from '../agent-logger.js'
import { ConfigFileError, formatProblem } from '../config/config-file-error.js'
import { configWarnings } from '../config/config-warnings.js'
import { loadAgentConfig } from '../config/load.js'
import { Gateway } from '../gateway.js'
import { createInputs } from '../inputs/create-inputs.js'
import { SpoolFormatError } from '../spool/spool-format.js'
import { heapBudgetWarning } from '../uplink/heap-budget.js'
import { type AgentCommand, AgentUsageError } from './agent-command.js'

/**
 * `hajri-agent run --config agent.yaml`: checks the configuration before anything starts (a bad
 * file: every problem listed, exit 2), then runs until SIGINT or SIGTERM. An unexpected error ends
 * the process (exit 1) for the service manager to restart: every acknowledged punch is already on
 * disk, so dying is safe, and carrying on in an unknown state is not.
 */
export const runCommand: AgentCommand = async (args, io) => {
  const { values } = parseArgs({ args: [...args], options: { config: { type: 'string', short: 'c' } } })
  if (!values.config) throw new AgentUsageError('--config FILE is required')
  let config: Awaited<ReturnType<typeof loadAgentConfig>>
  try {
    config = await loadAgentConfig(resolve(io.cwd, values.config), io.env)
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    io.stderr(
      `hajri-agent: ${err.file} cannot be used:\n${err.problems.map((p) => `  ${formatProblem(p)}`).join('\n')}\n`,
    )
    return 2
  }
  const log = createAgentLogger({ level: config.log.level, pretty: config.log.pretty ?? io.isTty })
  const fatal = (err: unknown) => {
    log.fatal({ err }, 'unexpected error; exiting for the service manager to restart the agent')
    process.exit(1)
  }
  process.on('uncaughtException', fatal)
  process.on('unhandledRejection', fatal)

  // Settings that work and leave something open: said at every start, in the service's log.
  for (const warning of configWarnings(config)) log.warn({ setting: warning.path }, formatProblem(warning))

  const gateway = new Gateway(config, { log, createInputs })
  try {
    await gateway.start()
  } catch (err) {
    log.fatal({ err }, 'the agent could not start')
    await gateway.stop().catch(() => {})
    // A spool from a newer agent: what to install, said in one line to whoever started it
    // (docs/decisions/0087-spool-format-version.md).
    if (err instanceof SpoolFormatError) io.stderr(`hajri-agent: ${err.message}\n`)
    return 1
  }
  log.info(
    {
      site: config.site.id,
      devices: config.devices.length,
      status: gateway.statusAddress,
      spool: config.spool.dir,
    },
    'hajri-agent running',
  )
  const heapWarning = heapBudgetWarning(
    { ...config.cloud, chunkPunches: config.spool.chunkPunches },
    getHeapStatistics().heap_size_limit,
  )
  if (heapWarning) log.warn(heapWarning)
  const signal = await new Promise<string>((done) => {
    process.once('SIGINT', () => done('SIGINT'))
    process.once('SIGTERM', () => done('SIGTERM'))
  })
  log.info({ signal }, 'stopping')
  await gateway.stop()
  log.info('stopped')
  return 0
}
