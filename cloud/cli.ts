#!/usr/bin/env node
import { realpath } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { AppError } from './app-error.js'
import { adminTokenCommands } from './commands/admin-token-commands.js'
import { apiKeyCommands } from './commands/api-key-commands.js'
import { auditCommands } from './commands/audit-commands.js'
import {
  CLI_OPTIONS,
  type CliIo,
  type Command,
  CommandContext,
  UsageError,
} from './commands/command-context.js'
import { deliveryCommands } from './commands/delivery-commands.js'
import { demoCommands } from './commands/demo-command.js'
import { employeeCommands } from './commands/employee-commands.js'
import { oauthAppCommands } from './commands/oauth-app-commands.js'
import { serverCommands } from './commands/server-commands.js'
import { tenantCommands } from './commands/tenant-commands.js'
import { userCommands } from './commands/user-commands.js'
import { webhookCommands } from './commands/webhook-commands.js'
import { CsvFormatError } from './features/employees/employee-csv.js'
import { ConfigError } from './settings/config-error.js'

export type { CliIo } from './commands/command-context.js'

export const USAGE = `hajri-cloud: the Hajri cloud service and its administration commands

Usage:
  hajri-cloud serve                     start the API (migrates the database first)
  hajri-cloud migrate                   bring the database schema up to date
  hajri-cloud demo                      npm start: the cloud with a demo tenant, a local agent and a simulated device
  hajri-cloud tenant create --name NAME --admin-email EMAIL [--time-zone Asia/Kolkata] [--backfill-days 90]
  hajri-cloud user reset-password --tenant ID EMAIL
  hajri-cloud employees import --tenant ID FILE.csv
  hajri-cloud api-key create --tenant ID --scopes employees:read,attendance:write
                             [--rate-limit 600] [--expires-in 90d] [--name NAME]
  hajri-cloud api-key list --tenant ID
  hajri-cloud api-key revoke --tenant ID KEY_ID
  hajri-cloud oauth-app create --tenant ID --name NAME --scopes attendance:write [--rate-limit 600] [--client-id ID]
  hajri-cloud oauth-app list --tenant ID
  hajri-cloud oauth-app rotate-secret --tenant ID APP_ID [--grace 24h]
  hajri-cloud oauth-app revoke --tenant ID APP_ID
  hajri-cloud audit list --tenant ID [--action api_key.revoked] [--target ID] [--limit 50]
  hajri-cloud admin-token create --tenant ID [--name NAME] [--expires-in 30d]
  hajri-cloud admin-token list --tenant ID
  hajri-cloud admin-token revoke --tenant ID TOKEN_ID
  hajri-cloud webhook create --tenant ID --url URL [--events a,b] [--description TEXT]
  hajri-cloud webhook list --tenant ID
  hajri-cloud webhook pause|resume|delete|test|reveal-secret --tenant ID ENDPOINT_ID
  hajri-cloud webhook rotate-secret --tenant ID ENDPOINT_ID [--grace 24h]
  hajri-cloud deliveries list --tenant ID [--endpoint ID] [--status failed] [--event-type TYPE]
                              [--from TIME] [--to TIME] [--limit 50] [--cursor C]
  hajri-cloud deliveries show|retry --tenant ID DELIVERY_ID
  hajri-cloud deliveries replay --tenant ID --endpoint ID --since 2026-11-20T00:00:00+05:30

Every command but serve takes --json for output that scripts can read.
The database comes from HAJRI_DATABASE_URL (default sqlite:./data/hajri.db);
see docs/operators/configuration.md.`

const COMMANDS: Record<string, Command> = {
  ...serverCommands,
  ...demoCommands,
  ...tenantCommands,
  ...userCommands,
  ...employeeCommands,
  ...apiKeyCommands,
  ...oauthAppCommands,
  ...auditCommands,
  ...adminTokenCommands,
  ...webhookCommands,
  ...deliveryCommands,
}

// Commands that take an operand after their name (a file, an id).
const WITH_OPERAND = new Set([
  'employees import',
  'api-key revoke',
  'oauth-app rotate-secret',
  'oauth-app revoke',
  'admin-token revoke',
  'user reset-password',
  'webhook pause',
  'webhook resume',
  'webhook delete',
  'webhook test',
  'webhook rotate-secret',
  'webhook reveal-secret',
  'deliveries show',
  'deliveries retry',
])

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
      options: CLI_OPTIONS,
      allowPositionals: true,
    })
    if (options.help || positionals.length === 0) {
      io.stdout(`${USAGE}\n`)
      return 0
    }
    const single = positionals[0] === 'serve' || positionals[0] === 'migrate'
    const name = single ? (positionals[0] as string) : positionals.slice(0, 2).join(' ')
    const command = COMMANDS[name]
    if (!command) throw new UsageError(`unknown command "${positionals.join(' ')}"`)
    const operands = positionals.slice(single ? 1 : 2)
    if (operands.length > (WITH_OPERAND.has(name) ? 1 : 0))
      throw new UsageError(`unexpected argument "${operands.at(-1)}"`)
    await command(new CommandContext(io, options, operands))
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
