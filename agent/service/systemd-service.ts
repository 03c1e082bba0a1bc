import { mkdir, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { RunProgram } from './run-program.js'
import {
  SERVICE_NAME,
  ServiceError,
  type ServiceManager,
  type ServiceOutput,
  type ServicePlan,
} from './service-manager.js'
import { renderSystemdUnit, SERVICE_USER, STATE_DIR, UNIT_PATH } from './systemd-unit.js'

export interface SystemdServiceOptions {
  /**
   * Another root directory (`--root DIR`): the unit is written under it and nothing else is done
   * (no user, no systemctl), as `systemctl --root` works on an image rather than the running system.
   */
  root: string | undefined
  /** Whether this process runs as root (uid 0). */
  isRoot: boolean
  run: RunProgram
  out: ServiceOutput
  /** Where the unit goes on the running system: UNIT_PATH; another file in tests. */
  unitPath?: string
}

/** The agent as a systemd service (docs/decisions/0086-agent-package.md). */
export class SystemdService implements ServiceManager {
  constructor(private readonly options: SystemdServiceOptions) {}

  private get unitPath(): string {
    return this.options.unitPath ?? UNIT_PATH
  }

  async install(plan: ServicePlan, { printOnly }: { printOnly: boolean }): Promise<number> {
    const unit = renderSystemdUnit(plan)
    if (printOnly) {
      this.options.out.stdout(unit)
      return 0
    }
    const { root, out } = this.options
    if (root !== undefined) {
      const path = join(root, UNIT_PATH)
      await mkdir(dirname(path), { recursive: true })
      await writeFile(path, unit, { mode: 0o644 })
      out.stdout(
        `wrote ${path}\nnot enabled or started: --root writes the unit only (there, \`systemctl --root=${root} enable ${SERVICE_NAME}\`)\n`,
      )
      return 0
    }
    this.requireRoot('install')
    await refuseUnreachablePaths(plan)
    await this.ensureUser()
    await this.ensureSpoolDir(plan.spoolDir)
    // The service runs as the hajri user: a configuration or secret file only root can read would
    // pass the check above and fail at every start; it is checked as that user now instead.
    const asUser = await this.options.run('runuser', [
      '-u',
      SERVICE_USER,
      '--',
      plan.nodePath,
      plan.mainPath,
      'check-config',
      '--config',
      plan.configPath,
    ])
    if (asUser !== 0) {
      throw new ServiceError(
        'SERVICE_COMMAND_FAILED',
        `check-config failed as the ${SERVICE_USER} user (above): ${plan.nodePath}, ${plan.mainPath} and ${plan.configPath} with its secret files must be readable by ${SERVICE_USER} (a node installed under /root is not; for the files: chown root:${SERVICE_USER}, chmod 0640), then install again`,
      )
    }
    await writeFile(this.unitPath, unit, { mode: 0o644 })
    out.stdout(`wrote ${this.unitPath}\n`)
    await this.systemctl('daemon-reload')
    await this.systemctl('enable', SERVICE_NAME)
    // restart, not start: after an upgrade the new package's code must replace the running one.
    await this.systemctl('restart', SERVICE_NAME)
    out.stdout(
      `${SERVICE_NAME} is enabled and started; see it with \`hajri-agent service status\` and \`hajri-agent service logs\`\n`,
    )
    return 0
  }

  async uninstall(): Promise<number> {
    const { root, out } = this.options
    if (root !== undefined) {
      await rm(join(root, UNIT_PATH), { force: true })
      out.stdout(`removed ${join(root, UNIT_PATH)}\n`)
      return 0
    }
    this.requireRoot('uninstall')
    if (!(await exists(this.unitPath))) {
      throw new ServiceError(
        'SERVICE_NOT_INSTALLED',
        `${this.unitPath} does not exist: the service is not installed`,
      )
    }
    await this.systemctl('disable', '--now', SERVICE_NAME)
    await rm(this.unitPath, { force: true })
    await this.systemctl('daemon-reload')
    out.stdout(
      `${SERVICE_NAME} stopped and removed; the configuration, the spool and the ${SERVICE_USER} user are kept\n`,
    )
    return 0
  }

  status(): Promise<number> {
    return this.options.run('systemctl', ['status', '--no-pager', SERVICE_NAME])
  }

  logs({ lines, follow }: { lines: number; follow: boolean }): Promise<number> {
    return this.options.run('journalctl', [
      '--unit',
      SERVICE_NAME,
      '--lines',
      String(lines),
      '--no-pager',
      ...(follow ? ['--follow'] : []),
    ])
  }

  private requireRoot(what: string): void {
    if (!this.options.isRoot) {
      throw new ServiceError(
        'SERVICE_NOT_ROOT',
        `service ${what} changes the system's services and must run as root: sudo hajri-agent service ${what} ... (or --print to see the unit)`,
      )
    }
  }

  /** The system user of deploy/hajri-agent.service, in the dialout group (serial ports). */
  private async ensureUser(): Promise<void> {
    const { run, out } = this.options
    if ((await run('id', ['-u', SERVICE_USER])) === 0) return
    const code = await run('useradd', [
      '--system',
      '--user-group',
      '--groups',
      'dialout',
      '--home-dir',
      STATE_DIR,
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      SERVICE_USER,
    ])
    if (code !== 0)
      throw new ServiceError('SERVICE_COMMAND_FAILED', `useradd ${SERVICE_USER} failed (exit ${code})`)
    out.stdout(`created the system user ${SERVICE_USER} (groups ${SERVICE_USER}, dialout)\n`)
  }

  /**
   * The spool directory, owned by the service user, made now: ReadWritePaths= refuses to start the
   * service on a path that does not exist. Under /var/lib/hajri-agent, systemd keeps the ownership
   * of the state directory right at every start too (StateDirectory=).
   */
  private async ensureSpoolDir(spoolDir: string): Promise<void> {
    await mkdir(spoolDir, { recursive: true, mode: 0o750 })
    const owned = spoolDir.startsWith(`${STATE_DIR}/`) ? [STATE_DIR, spoolDir] : [spoolDir]
    for (const dir of owned) {
      const code = await this.options.run('chown', [`${SERVICE_USER}:${SERVICE_USER}`, dir])
      if (code !== 0)
        throw new ServiceError('SERVICE_COMMAND_FAILED', `chown of ${dir} failed (exit ${code})`)
    }
  }

  private async systemctl(...args: string[]): Promise<void> {
    const code = await this.options.run('systemctl', args)
    if (code !== 0) {
      throw new ServiceError('SERVICE_COMMAND_FAILED', `systemctl ${args.join(' ')} failed (exit ${code})`)
    }
  }
}

/**
 * Paths the service could not reach: main.js of a checkout run through tsx (there is none; the
 * service runs an installed package), and anything under /tmp or /var/tmp, which PrivateTmp=
 * replaces with an empty directory of the service's own.
 */
async function refuseUnreachablePaths(plan: ServicePlan): Promise<void> {
  if (!(await exists(plan.mainPath))) {
    throw new ServiceError(
      'SERVICE_COMMAND_FAILED',
      `${plan.mainPath} does not exist: run service install from the installed package (docs/site-agent/install.md)`,
    )
  }
  for (const [what, path] of [
    ['the package', plan.mainPath],
    ['the configuration file', plan.configPath],
    ['spool.dir', plan.spoolDir],
  ] as const) {
    if (['/tmp', '/var/tmp'].some((dir) => path === dir || path.startsWith(`${dir}/`))) {
      throw new ServiceError(
        'SERVICE_COMMAND_FAILED',
        `${what} is under ${path.startsWith('/tmp') ? '/tmp' : '/var/tmp'} (${path}), which the service does not see (PrivateTmp=true): move it`,
      )
    }
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}
