import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { ConfigFileError, formatProblem } from '../config/config-file-error.js'
import { loadAgentConfig } from '../config/load.js'
import { runProgram } from '../service/run-program.js'
import { ServiceError, type ServiceManager, type ServiceOutput } from '../service/service-manager.js'
import { SystemdService } from '../service/systemd-service.js'
import { WindowsService } from '../service/windows-service.js'
import { type AgentCommand, type AgentIo, AgentUsageError } from './agent-command.js'

/**
 * `hajri-agent service install|uninstall|status|logs` (docs/decisions/0086-agent-package.md,
 * docs/site-agent/install.md): the installed package registers itself as the machine's service,
 * systemd on Linux, the service control manager on Windows.
 */

/** `--root DIR` may come from here instead (tests, image builds). */
export const SERVICE_ROOT_ENV = 'HAJRI_AGENT_SERVICE_ROOT'

/** The installed package's entry point, next to this file's directory: dist/agent/main.js. */
const MAIN_PATH = fileURLToPath(new URL('../main.js', import.meta.url))

/**
 * `service install --config FILE [--print | --dry-run] [--root DIR]`: the configuration is checked
 * first, as check-config does (a bad file: one line per wrong field, exit 2, nothing installed), and
 * the service runs the node and main.js of this very package.
 */
export const serviceInstallCommand: AgentCommand = async (args, io) => {
  const { values } = parse(args, {
    config: { type: 'string', short: 'c' },
    print: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    root: { type: 'string' },
  })
  if (values.config === undefined || values.config === '') {
    throw new AgentUsageError('service install needs --config FILE (the file the service will run with)')
  }
  const configPath = resolve(io.cwd, values.config)
  let spoolDir: string
  try {
    spoolDir = (await loadAgentConfig(configPath, io.env)).spool.dir
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err
    const count = err.problems.length === 1 ? '1 problem' : `${err.problems.length} problems`
    io.stderr(`hajri-agent: ${err.file}: ${count}; the service is not installed\n`)
    for (const problem of err.problems) io.stderr(`${formatProblem(problem)}\n`)
    return 2
  }
  const manager = managerFor(io, values.root)
  return manager.install(
    { nodePath: process.execPath, mainPath: MAIN_PATH, configPath, spoolDir },
    { printOnly: values.print === true || values['dry-run'] === true },
  )
}

/** `service uninstall [--root DIR]`: stops and removes the service; configuration and spool stay. */
export const serviceUninstallCommand: AgentCommand = async (args, io) => {
  const { values } = parse(args, { root: { type: 'string' } })
  return managerFor(io, values.root).uninstall()
}

/** `service status`: systemctl status, or sc query on Windows. */
export const serviceStatusCommand: AgentCommand = async (args, io) => {
  parse(args, {})
  return managerFor(io, undefined).status()
}

/** `service logs [--lines N] [--follow]`: the journal, or the tail of node-windows' log files. */
export const serviceLogsCommand: AgentCommand = async (args, io) => {
  const { values } = parse(args, {
    lines: { type: 'string', short: 'n', default: '100' },
    follow: { type: 'boolean', short: 'f', default: false },
  })
  const lines = Number(values.lines)
  if (!Number.isInteger(lines) || lines <= 0) {
    throw new AgentUsageError(`--lines must be a whole number above 0 (got "${values.lines}")`)
  }
  return managerFor(io, undefined).logs({ lines, follow: values.follow === true })
}

type Options = NonNullable<ParseArgsConfig['options']>

function parse<T extends Options>(args: readonly string[], options: T) {
  const parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true as const })
  if (parsed.positionals.length > 0) {
    throw new AgentUsageError(`unexpected "${parsed.positionals[0]}"`)
  }
  return parsed
}

function managerFor(io: AgentIo, rootOption: string | undefined): ServiceManager {
  const out: ServiceOutput = { stdout: io.stdout, stderr: io.stderr }
  const rootSetting = rootOption ?? io.env[SERVICE_ROOT_ENV]
  const root = rootSetting ? resolve(io.cwd, rootSetting) : undefined
  if (process.platform === 'win32') {
    const programData = io.env.ProgramData ?? io.env.PROGRAMDATA ?? 'C:\\ProgramData'
    return new WindowsService({ dataDir: join(programData, 'hajri-agent'), run: runProgram, out })
  }
  if (process.platform === 'linux') {
    return new SystemdService({ root, isRoot: process.getuid?.() === 0, run: runProgram, out })
  }
  throw new ServiceError(
    'SERVICE_UNSUPPORTED_PLATFORM',
    `service commands work with systemd (Linux) and Windows; on ${process.platform}, run \`hajri-agent run --config FILE\` from the system's own service manager`,
  )
}
