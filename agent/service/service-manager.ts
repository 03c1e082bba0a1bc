/**
 * `hajri-agent service ...` (docs/decisions/0086-agent-package.md): the agent registers itself
 * with the machine's service manager, systemd on Linux (systemd-service.ts) or the Windows service
 * control manager through node-windows (windows-service.ts). The command checks the configuration
 * and works out the plan; a manager only carries it out.
 */

/** What the service runs: the installed package's own node and main.js, on one configuration file. */
export interface ServicePlan {
  /** The node that runs the agent now (process.execPath): the one the package was installed for. */
  nodePath: string
  /** The installed package's dist/agent/main.js, absolute. */
  mainPath: string
  /** The configuration file, absolute. */
  configPath: string
  /** spool.dir of that file, absolute: the one directory the service writes. */
  spoolDir: string
}

/** Where a manager's commands write (the command's io). */
export interface ServiceOutput {
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** One platform's service manager. Each method resolves to the command's exit status. */
export interface ServiceManager {
  /** Writes the service definition, enables and starts it; with `printOnly`, prints it and changes nothing. */
  install(plan: ServicePlan, options: { printOnly: boolean }): Promise<number>
  /** Stops, disables and removes the service; the configuration and the spool stay. */
  uninstall(): Promise<number>
  status(): Promise<number>
  /** The service's log: the journal on Linux, the daemon log files on Windows. */
  logs(options: { lines: number; follow: boolean }): Promise<number>
}

/**
 * Node's heap flags for the service, as deploy/hajri-agent.service has them (its comment says why:
 * peak RSS <= 150 MB while a backlog drains).
 */
export const SERVICE_NODE_FLAGS = ['--max-old-space-size=64', '--max-semi-space-size=4'] as const

/** The service's name, for systemd and Windows alike. */
export const SERVICE_NAME = 'hajri-agent'

export type ServiceErrorCode =
  | 'SERVICE_NOT_ROOT'
  | 'SERVICE_UNSUPPORTED_PLATFORM'
  | 'SERVICE_COMMAND_FAILED'
  | 'SERVICE_NOT_INSTALLED'

/** A service command that cannot go on; its message says why and what to do. */
export class ServiceError extends Error {
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'ServiceError'
  }
}
