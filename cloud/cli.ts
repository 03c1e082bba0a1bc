#!/usr/bin/env node
import { realpath } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { AppError } from './app-error.js'
import { adminTokenCommands } from './commands/admin-token-commands.js'
import { apiKeyCommands } from './commands/api-key-commands.js'
import { auditCommands } from './commands/audit-commands.js'
import {
  type CliIo,
  CommandContext,
  type CommandEntry,
  type CommandOptions,
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
import { DEFAULT_DATABASE_URL } from './settings/database-url.js'

/** Every command, each declared once; the usage lists them in this order. */
export const COMMANDS: readonly CommandEntry[] = [
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
]

/** Taken by every command: `--help` prints the usage, `--json` the output as JSON. */
const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

/** parseArgs' declaration of `options`, each a string option, beside the common ones. */
function optionsOf(names: Iterable<string>) {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { ...COMMON_OPTIONS }
  for (const name of names) options[name] = { type: 'string' }
  return options
}

/**
 * The usage lines of the commands: a command's continuation lines align under its first option,
 * and neighbours of one group with the same arguments share a line (`webhook pause|resume`).
 */
function usageLines(commands: readonly CommandEntry[]): string[] {
  const lines: string[] = []
  for (let i = 0; i < commands.length; i++) {
    const entry = commands[i] as CommandEntry
    let name = entry.name
    const [group] = name.split(' ')
    while (
      entry.summary === undefined &&
      commands[i + 1]?.usage === entry.usage &&
      commands[i + 1]?.name.startsWith(`${group} `)
    ) {
      i++
      name += `|${(commands[i] as CommandEntry).name.slice(group?.length ?? 0).trim()}`
    }
    const head = `  hajri-cloud ${name}`
    if (entry.summary !== undefined) lines.push(`${head.padEnd(40)}${entry.summary}`)
    else {
      const [first, ...rest] = (entry.usage ?? '').split('\n')
      lines.push(`${head} ${first}`.trimEnd(), ...rest.map((line) => `${' '.repeat(head.length + 1)}${line}`))
    }
  }
  return lines
}

export const USAGE = `hajri-cloud: the Hajri cloud service and its administration commands

Usage:
${usageLines(COMMANDS).join('\n')}

Every command but serve takes --json for output that scripts can read.
The database comes from HAJRI_DATABASE_URL (default ${DEFAULT_DATABASE_URL});
see docs/operators/configuration.md.`

/** The command that `positionals` name (one word, or a group and a verb), and its operands. */
function findCommand(positionals: readonly string[]): { entry: CommandEntry; operands: string[] } {
  for (const words of [1, 2]) {
    const entry = COMMANDS.find((c) => c.name === positionals.slice(0, words).join(' '))
    if (entry && entry.name.split(' ').length === words) return { entry, operands: positionals.slice(words) }
  }
  throw new UsageError(`unknown command "${positionals.join(' ')}"`)
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
    // Every option of every command first, to tell the command's name from option values; then
    // the command's own, so that an option it does not take is refused.
    const { values: anyOptions, positionals } = parseArgs({
      args: [...argv],
      options: optionsOf(COMMANDS.flatMap((c) => c.options)),
      allowPositionals: true,
    })
    if (anyOptions.help || positionals.length === 0) {
      io.stdout(`${USAGE}\n`)
      return 0
    }
    const { entry, operands } = findCommand(positionals)
    const { values: options } = parseArgs({
      args: [...argv],
      options: optionsOf(entry.options),
      allowPositionals: true,
    })
    if (operands.length > (entry.operand ? 1 : 0))
      throw new UsageError(`unexpected argument "${operands.at(-1)}"`)
    // optionsOf declares every option but --json and --help a string.
    const given = options as CommandOptions<string>
    await entry.run(new CommandContext(io, given, operands, entry.operand?.what))
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
