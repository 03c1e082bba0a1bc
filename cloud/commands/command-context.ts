import { userInfo } from 'node:os'
import type { parseArgs } from 'node:util'
import { parseDuration } from '../../shared/duration.js'
import type { Actor } from '../auth/actor.js'
import { loadCloudConfig } from '../config.js'
import { type DatabaseHandle, openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { createServices, type Services } from '../services.js'

/** Where a command reads its settings and writes its output; the process's own, or a test's. */
export interface CliIo {
  env: NodeJS.ProcessEnv
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** A mistake in how the command was called: exit status 2, with the usage. */
export class UsageError extends Error {}

export const CLI_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  'admin-email': { type: 'string' },
  'time-zone': { type: 'string' },
  'backfill-days': { type: 'string' },
  tenant: { type: 'string' },
  scopes: { type: 'string' },
  'rate-limit': { type: 'string' },
  'expires-in': { type: 'string' },
  'client-id': { type: 'string' },
  grace: { type: 'string' },
  action: { type: 'string' },
  target: { type: 'string' },
  limit: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  description: { type: 'string' },
  endpoint: { type: 'string' },
  status: { type: 'string' },
  'event-type': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  cursor: { type: 'string' },
  since: { type: 'string' },
} as const

export type CliOptions = ReturnType<
  typeof parseArgs<{ options: typeof CLI_OPTIONS; allowPositionals: true }>
>['values']

type StringOption = Exclude<keyof typeof CLI_OPTIONS, 'json' | 'help'>

/** What every command gets: its arguments, its output, and the services over the configured database. */
export class CommandContext {
  constructor(
    readonly io: CliIo,
    readonly options: CliOptions,
    readonly operands: readonly string[],
  ) {}

  /** Audit actor: the operating-system user who ran the command. */
  get actor(): Actor {
    let user = 'unknown'
    try {
      user = userInfo().username
    } catch {}
    return { name: `cli:${user}`, ip: null }
  }

  print(value: unknown, human: string): void {
    this.io.stdout(this.options.json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`)
  }

  required(name: StringOption): string {
    const value = this.options[name]
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
    return value
  }

  operand(what: string): string {
    const value = this.operands[0]
    if (value === undefined) throw new UsageError(`give the ${what}`)
    return value
  }

  wholeNumber(name: StringOption): number | undefined {
    const text = this.options[name]
    if (text === undefined) return undefined
    if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${name} must be a whole number, got "${text}"`)
    return Number(text)
  }

  /** A duration option in seconds (`90d`, `12h`, `30m`, `1y`). */
  duration(name: StringOption): number | undefined {
    const text = this.options[name]
    if (text === undefined) return undefined
    const seconds = parseDuration(text)
    if (seconds === undefined)
      throw new UsageError(`--${name} must be a duration such as 90d, 12h or 1y, got "${text}"`)
    return seconds
  }

  /** A comma-separated list option. */
  list(name: StringOption): string[] {
    return this.required(name)
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  }

  /**
   * Opens the configured database, brings its schema up to date, runs `work` with the services,
   * and closes the database, which waits for what `work` wrote to be on disk.
   */
  async withServices<T>(work: (services: Services, database: DatabaseHandle) => Promise<T>): Promise<T> {
    const config = loadCloudConfig(this.io.env)
    const database = openDatabase(config.databaseUrl, {
      poolSize: 2,
      cwd: this.io.cwd,
      secretKey: config.secretKey,
      secretKeyFile: config.secretKeyFile,
    })
    const services = createServices(database, { webhooks: config.webhooks })
    try {
      await migrateToLatest(database.db)
      return await work(services, database)
    } finally {
      services.urlPolicy.close()
      await database.close()
    }
  }
}

export type Command = (context: CommandContext) => Promise<void>
