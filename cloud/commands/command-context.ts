import { userInfo } from 'node:os'
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

/** The options a command takes, each a string (`--tenant ID`), and `--json`, which every command takes. */
export type CommandOptions<O extends string> = Readonly<Partial<Record<O, string>>> & {
  readonly json?: boolean
}

/**
 * One command of `hajri-cloud`, declared once: the CLI builds its usage, its operand check and its
 * option parsing from these (cli.ts).
 */
export interface CommandEntry<O extends string = string> {
  /** The words that name it: `serve`, `api-key create`. */
  name: string
  /**
   * What follows the name in the usage; a line break starts a line aligned under the first one.
   * It names the operand and every option of `options`.
   */
  usage?: string
  /** A few words shown beside a command without arguments (`serve`). */
  summary?: string
  /** Its one operand (a file, an id): the name its usage shows, and what is missing when it is not given. */
  operand?: { name: string; what: string }
  /** The string options it takes; any other is a usage error (`--json` and `--help` are always taken). */
  options: readonly O[]
  run(context: CommandContext<O>): Promise<void>
}

/** Declares a command; its options give `run` its typed `context.options`. */
export function command<const O extends string = never>(entry: CommandEntry<O>): CommandEntry<O> {
  return entry
}

/** What every command gets: its arguments, its output, and the services over the configured database. */
export class CommandContext<O extends string = string> {
  constructor(
    readonly io: CliIo,
    readonly options: CommandOptions<O>,
    readonly operands: readonly string[],
    private readonly operandWhat = 'argument',
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

  required(name: O): string {
    const value = this.options[name]
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
    return value
  }

  operand(): string {
    const value = this.operands[0]
    if (value === undefined) throw new UsageError(`give the ${this.operandWhat}`)
    return value
  }

  wholeNumber(name: O): number | undefined {
    const text = this.options[name]
    if (text === undefined) return undefined
    if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${name} must be a whole number, got "${text}"`)
    return Number(text)
  }

  /** A duration option in seconds (`90d`, `12h`, `30m`, `1y`). */
  duration(name: O): number | undefined {
    const text = this.options[name]
    if (text === undefined) return undefined
    const seconds = parseDuration(text)
    if (seconds === undefined)
      throw new UsageError(`--${name} must be a duration such as 90d, 12h or 1y, got "${text}"`)
    return seconds
  }

  /** A comma-separated list option. */
  list(name: O): string[] {
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

/** A default duration as a usage line shows it, in the unit given: `90d`, `24h`. */
export function durationText(seconds: number, unit: 'h' | 'd'): string {
  return `${seconds / (unit === 'd' ? 86_400 : 3600)}${unit}`
}
