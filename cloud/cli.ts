#!/usr/bin/env node
import { readFile, realpath } from 'node:fs/promises'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { parseDuration } from '../shared/duration.js'
import { loggerOptions } from './app.js'
import { AppError } from './app-error.js'
import { ConfigError, loadCloudConfig } from './config.js'
import { type DatabaseHandle, openDatabase } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { ApiKeyService } from './features/credentials/service.js'
import { CsvFormatError, parseEmployeeCsv } from './features/employees/employee-csv.js'
import { EmployeeService } from './features/employees/service.js'
import { TenantService } from './features/tenants/service.js'
import { startServer } from './server.js'

export const USAGE = `hajri-cloud: the Hajri cloud service and its administration commands

Usage:
  hajri-cloud serve                     start the API (migrates the database first)
  hajri-cloud migrate                   bring the database schema up to date
  hajri-cloud tenant create --name NAME --admin-email EMAIL [--time-zone Asia/Kolkata] [--backfill-days 90]
  hajri-cloud employees import --tenant ID FILE.csv
  hajri-cloud api-key create --tenant ID --scopes employees:read,attendance:write
                             [--rate-limit 600] [--expires-in 90d] [--name NAME]

Every command but serve takes --json for output that scripts can read.
The database comes from HAJRI_DATABASE_URL (default sqlite:./data/hajri.db); see the README.`

/** Where a command reads its settings and writes its output; the process's own, or a test's. */
export interface CliIo {
  env: NodeJS.ProcessEnv
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
}

/** A mistake in how the command was called: exit status 2, with the usage. */
class UsageError extends Error {}

const OPTIONS = {
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
} as const

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values']

function required(options: Options, name: 'name' | 'admin-email' | 'tenant' | 'scopes'): string {
  const value = options[name]
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`)
  return value
}

function wholeNumber(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${name} must be a whole number, got "${text}"`)
  return Number(text)
}

class Commands {
  constructor(
    private readonly io: CliIo,
    private readonly options: Options,
  ) {}

  private print(value: unknown, human: string): void {
    this.io.stdout(this.options.json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`)
  }

  /** Opens the configured database, brings its schema up to date, runs `work`, closes it. */
  private async withDatabase<T>(work: (database: DatabaseHandle) => Promise<T>): Promise<T> {
    const config = loadCloudConfig(this.io.env)
    const database = openDatabase(config.databaseUrl, { poolSize: 2, cwd: this.io.cwd })
    try {
      await migrateToLatest(database.db)
      return await work(database)
    } finally {
      await database.close()
    }
  }

  async serve(): Promise<void> {
    const config = loadCloudConfig(this.io.env)
    const log = pino(loggerOptions(config.logLevel))
    const server = await startServer(config, log)
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping')
      server.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'stop failed')
          process.exit(1)
        },
      )
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  }

  async migrate(): Promise<void> {
    const config = loadCloudConfig(this.io.env)
    const database = openDatabase(config.databaseUrl, { poolSize: 1, cwd: this.io.cwd })
    try {
      const applied = await migrateToLatest(database.db)
      this.print(
        { applied, database: database.describe },
        applied.length > 0 ? `applied: ${applied.join(', ')}` : `${database.describe}: schema up to date`,
      )
    } finally {
      await database.close()
    }
  }

  async tenantCreate(): Promise<void> {
    const input = {
      name: required(this.options, 'name'),
      adminEmail: required(this.options, 'admin-email'),
      timeZone: this.options['time-zone'],
      backfillDays: wholeNumber(this.options['backfill-days'], 'backfill-days'),
    }
    const result = await this.withDatabase((database) => new TenantService({ db: database.db }).create(input))
    this.print(
      result,
      `tenant ${result.tenantId} created\nconsole owner: ${result.adminEmail}\n` +
        `one-time password: ${result.adminPassword}\n(shown once; the console asks for a new one at the first sign-in)`,
    )
  }

  async employeesImport(file: string | undefined): Promise<void> {
    if (!file) throw new UsageError('give the CSV file to import')
    const tenantId = required(this.options, 'tenant')
    const parsed = parseEmployeeCsv(await readFile(resolve(this.io.cwd, file), 'utf8'))
    const summary = await this.withDatabase((database) =>
      new EmployeeService({ db: database.db }).upsert(
        tenantId,
        parsed.rows.map((r) => r.input),
      ),
    )
    const lines = [
      `created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, rejected ${parsed.rejected.length}`,
      ...parsed.rejected.map((r) => `  line ${r.line}: ${r.reason}`),
    ]
    this.print({ ...summary, rejected: parsed.rejected }, lines.join('\n'))
  }

  async apiKeyCreate(): Promise<void> {
    const expiresIn = this.options['expires-in']
    const expiresInSeconds = expiresIn === undefined ? undefined : parseDuration(expiresIn)
    if (expiresIn !== undefined && expiresInSeconds === undefined) {
      throw new UsageError(`--expires-in must be a duration such as 90d, 12h or 1y, got "${expiresIn}"`)
    }
    const tenantId = required(this.options, 'tenant')
    const input = {
      name: this.options.name,
      scopes: required(this.options, 'scopes')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
      rateLimitPerMinute: wholeNumber(this.options['rate-limit'], 'rate-limit'),
      expiresInSeconds,
    }
    const result = await this.withDatabase((database) =>
      new ApiKeyService({ db: database.db }).create(tenantId, input),
    )
    this.print(
      result,
      `API key ${result.id} (${result.scopes.join(' ')}), ${result.rateLimitPerMinute}/min, expires ${result.expiresAt}\n` +
        `${result.key}\n(shown once: store it now, only its hash is kept; never put it in browser code)`,
    )
  }
}

/** Runs one command; resolves to the exit status (0 done, 1 failed, 2 wrong usage or configuration). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const json = argv.includes('--json')
  const fail = (code: string, message: string, status: number) => {
    if (json) io.stdout(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`)
    io.stderr(`hajri-cloud: ${message}\n`)
    return status
  }
  try {
    const { values: options, positionals } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
    })
    if (options.help || positionals.length === 0) {
      io.stdout(`${USAGE}\n`)
      return 0
    }
    const single = positionals[0] === 'serve' || positionals[0] === 'migrate'
    const command = single ? positionals[0] : positionals.slice(0, 2).join(' ')
    const operands = positionals.slice(single ? 1 : 2)
    if (operands.length > (command === 'employees import' ? 1 : 0)) {
      throw new UsageError(`unexpected argument "${operands.at(-1)}"`)
    }
    const commands = new Commands(io, options)
    switch (command) {
      case 'serve':
        await commands.serve()
        break
      case 'migrate':
        await commands.migrate()
        break
      case 'tenant create':
        await commands.tenantCreate()
        break
      case 'employees import':
        await commands.employeesImport(operands[0])
        break
      case 'api-key create':
        await commands.apiKeyCreate()
        break
      default:
        throw new UsageError(`unknown command "${positionals.join(' ')}"`)
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      return fail('usage', `${(err as Error).message}\n\n${USAGE}`, 2)
    }
    if (err instanceof ConfigError) return fail('invalid_configuration', err.message, 2)
    if (err instanceof AppError) return fail(err.code, err.detail ?? err.title, 1)
    if (err instanceof CsvFormatError) return fail('invalid_csv', err.message, 1)
    if ((err as { code?: string }).code === 'ENOENT') return fail('file_not_found', (err as Error).message, 1)
    return fail('failed', err instanceof Error ? err.message : String(err), 1)
  }
}

async function isEntryPoint(): Promise<boolean> {
  const script = process.argv[1]
  if (!script) return false
  // npm links bins, so compare real paths.
  return (await realpath(script).catch(() => script)) === fileURLToPath(import.meta.url)
}

if (await isEntryPoint()) {
  const io: CliIo = {
    env: process.env,
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }
  process.exitCode = await runCli(process.argv.slice(2), io)
}
