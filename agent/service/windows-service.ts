import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { RunProgram } from './run-program.js'
import {
  SERVICE_NAME,
  SERVICE_NODE_FLAGS,
  ServiceError,
  type ServiceManager,
  type ServiceOutput,
  type ServicePlan,
} from './service-manager.js'
import { renderWindowsServiceScript } from './windows-service-script.js'

/** node-windows' Service, as much of it as is used here (it ships no types). */
interface NodeWindowsService {
  exists: boolean
  logOnAs: { domain: string | null; account: string | null; password: string | null }
  install(): void
  uninstall(): void
  on(event: string, listener: (...args: unknown[]) => void): void
}

export interface WindowsServiceOptions {
  /** Where the service script and node-windows' daemon directory (its logs) live: %ProgramData%\hajri-agent. */
  dataDir: string
  run: RunProgram
  out: ServiceOutput
}

/** The script's file name; node-windows keeps its daemon directory (winsw, logs) beside it. */
const SCRIPT = 'hajri-agent-service.cjs'

/**
 * The agent as a Windows service through node-windows (docs/decisions/0086-agent-package.md): its
 * bundled winsw.exe is copied into the daemon directory and registered with the service control
 * manager; nothing is downloaded. The daemon directory is outside the package, so an upgrade
 * (npm install -g of a newer tarball) keeps the service and its logs.
 */
export class WindowsService implements ServiceManager {
  constructor(private readonly options: WindowsServiceOptions) {}

  private get scriptPath(): string {
    return join(this.options.dataDir, 'service', SCRIPT)
  }

  /** node-windows' daemon directory: winsw's files and the service's logs. */
  get logDir(): string {
    return join(this.options.dataDir, 'service', 'daemon')
  }

  async install(plan: ServicePlan, { printOnly }: { printOnly: boolean }): Promise<number> {
    const script = renderWindowsServiceScript(plan)
    const { out } = this.options
    if (printOnly) {
      out.stdout(
        `${this.scriptPath}:\n${script}\nrun by ${plan.nodePath} as the Windows service ${SERVICE_NAME}\n`,
      )
      return 0
    }
    await mkdir(join(this.options.dataDir, 'service'), { recursive: true })
    await mkdir(plan.spoolDir, { recursive: true })
    await writeFile(this.scriptPath, script)
    // The service runs as LocalService, as deploy/windows-service.md had it: it may change its
    // daemon directory (logs) and the spool, and nothing else of this machine's.
    for (const dir of [join(this.options.dataDir, 'service'), plan.spoolDir]) {
      const code = await this.options.run('icacls', [dir, '/grant', `${SERVICE_ACCOUNT}:(OI)(CI)M`])
      if (code !== 0) throw new ServiceError('SERVICE_COMMAND_FAILED', `icacls ${dir} failed (exit ${code})`)
    }
    const service = this.service(plan.nodePath)
    if (service.exists) {
      // An upgrade: the script above already runs the new package; a restart picks it up.
      out.stdout(`${SERVICE_NAME} is already installed; restarting it\n`)
      await this.sc('stop')
      await this.sc('start')
      return 0
    }
    await new Promise<void>((resolve, reject) => {
      service.on('install', () => resolve())
      service.on('alreadyinstalled', () => resolve())
      service.on('invalidinstallation', () =>
        reject(new ServiceError('SERVICE_COMMAND_FAILED', `the files in ${this.logDir} are incomplete`)),
      )
      service.on('error', (err) => reject(err instanceof Error ? err : new Error(String(err))))
      service.install()
    })
    await this.sc('start')
    out.stdout(
      `${SERVICE_NAME} is installed and started; see it with \`hajri-agent service status\` and \`hajri-agent service logs\`\n`,
    )
    return 0
  }

  async uninstall(): Promise<number> {
    const service = this.service(process.execPath)
    if (!service.exists) {
      throw new ServiceError(
        'SERVICE_NOT_INSTALLED',
        `${SERVICE_NAME} is not installed (nothing in ${this.logDir})`,
      )
    }
    await new Promise<void>((resolve, reject) => {
      service.on('uninstall', () => resolve())
      service.on('alreadyuninstalled', () => resolve())
      service.on('error', (err) => reject(err instanceof Error ? err : new Error(String(err))))
      service.uninstall()
    })
    this.options.out.stdout(`${SERVICE_NAME} stopped and removed; the configuration and the spool are kept\n`)
    return 0
  }

  status(): Promise<number> {
    return this.options.run('sc.exe', ['query', SERVICE_ID])
  }

  async logs({ lines, follow }: { lines: number; follow: boolean }): Promise<number> {
    if (follow)
      this.options.out.stderr('hajri-agent: --follow is for the journal (Linux); the last lines follow\n')
    const names = (await readdir(this.logDir).catch(() => [])).filter((name) => name.endsWith('.log')).sort()
    if (names.length === 0) {
      throw new ServiceError(
        'SERVICE_NOT_INSTALLED',
        `no log files in ${this.logDir}: is the service installed?`,
      )
    }
    for (const name of names) {
      const text = await readFile(join(this.logDir, name), 'utf8')
      const tail = text.split(/\r?\n/).filter(Boolean).slice(-lines)
      this.options.out.stdout(`==> ${join(this.logDir, name)} <==\n${tail.join('\n')}\n`)
    }
    return 0
  }

  private service(nodePath: string): NodeWindowsService {
    // node-windows is CommonJS and loaded only here, on Windows.
    const require = createRequire(import.meta.url)
    const { Service } = require('node-windows') as {
      Service: new (config: Record<string, unknown>) => NodeWindowsService
    }
    const service = new Service({
      name: SERVICE_NAME,
      description: 'Hajri site agent (biometric devices to Hajri)',
      script: this.scriptPath,
      execPath: nodePath,
      // Heap flags as in deploy/hajri-agent.service; the wrapper's fork() passes them to the agent.
      nodeOptions: [...SERVICE_NODE_FLAGS],
      workingDirectory: join(this.options.dataDir, 'service'),
      // Restart=always: every 2 s, however often it fails (wrapper.js gives up after maxRestarts
      // starts within 60 s).
      wait: 2,
      grow: 0,
      maxRestarts: Number.MAX_SAFE_INTEGER,
      stoptimeout: 30,
    })
    // WinSW 2's <serviceaccount> form (node-windows writes domain, user and an empty password).
    service.logOnAs.domain = 'NT AUTHORITY'
    service.logOnAs.account = 'LocalService'
    service.logOnAs.password = ''
    return service
  }

  private async sc(verb: 'start' | 'stop'): Promise<void> {
    const code = await this.options.run('sc.exe', [verb, SERVICE_ID])
    // 1062: stop of a service that is not started; 1056: start of one already running.
    if (code !== 0 && code !== 1062 && code !== 1056) {
      throw new ServiceError('SERVICE_COMMAND_FAILED', `sc.exe ${verb} ${SERVICE_ID} failed (exit ${code})`)
    }
  }
}

/** The account the service runs as: no password, no rights beyond those given above. */
const SERVICE_ACCOUNT = 'NT AUTHORITY\\LocalService'

/** node-windows names the service after its winsw executable: the name without non-word characters, `.exe`. */
const SERVICE_ID = `${SERVICE_NAME.replace(/[^\w]/g, '').toLowerCase()}.exe`
