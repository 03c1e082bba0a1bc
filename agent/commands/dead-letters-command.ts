import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { csvRow } from '../../shared/csv-cell.js'
import { agentVersion } from '../agent-version.js'
import { EventBus } from '../events.js'
import type { DeadLetter } from '../punch/spooled-punch.js'
import { DEAD_LETTER_PAGE_MAX, DeadLetters } from '../spool/dead-letters.js'
import { Spool } from '../spool/spool.js'
import { checkSpoolFormat } from '../spool/spool-format.js'
import { type AgentCommand, type AgentIo, AgentUsageError } from './agent-command.js'
import { type AgentControl, agentControl, CONTROL_OPTIONS } from './agent-control.js'
import { DEFAULT_STATUS_URL } from './status-command.js'

const OPTIONS = {
  spool: { type: 'string' },
  url: { type: 'string' },
  json: { type: 'boolean' },
  reason: { type: 'string' },
  device: { type: 'string' },
  format: { type: 'string' },
} as const

type Options = ReturnType<typeof parse>

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS }).values
}

function agentUrl(options: Options, io: AgentIo): string {
  return (options.url ?? io.env.HAJRI_AGENT_STATUS_URL ?? DEFAULT_STATUS_URL).replace(/\/+$/, '')
}

/**
 * The dead letters of a stopped agent's spool. Its format is checked first, as the agent checks it
 * when it starts (docs/decisions/0087-spool-format-version.md): a spool from a newer agent is
 * refused with nothing in it touched, rather than misread.
 */
async function openDeadLetters(spoolDir: string): Promise<DeadLetters> {
  await checkSpoolFormat(spoolDir, { version: agentVersion() })
  const dead = new DeadLetters({ dir: join(spoolDir, 'dead-letters'), log: pino({ level: 'silent' }) })
  await dead.open()
  return dead
}

/**
 * The dead letters (those the filter keeps), page after page, from the running agent or with
 * --spool from the spool directory itself (for an agent that is stopped; reading is safe while it
 * runs too). Paged, so that neither the agent nor this command holds them all at once.
 */
async function* deadLetterPages(options: Options, io: AgentIo): AsyncGenerator<DeadLetter[]> {
  let cursor: string | undefined
  if (options.spool) {
    const dead = await openDeadLetters(options.spool)
    do {
      const page = await dead.list({ limit: DEAD_LETTER_PAGE_MAX, cursor, select: matches(options) })
      yield page.data
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    return
  }
  const url = agentUrl(options, io)
  do {
    const query = new URLSearchParams({ limit: String(DEAD_LETTER_PAGE_MAX) })
    if (cursor) query.set('cursor', cursor)
    if (options.reason) query.set('reason', options.reason)
    if (options.device) query.set('deviceId', options.device)
    let response: Response
    try {
      response = await fetch(`${url}/dead-letters?${query}`, { signal: AbortSignal.timeout(30_000) })
    } catch {
      throw new AgentUsageError(
        `no agent answers at ${url}: give --spool DIR (the spool.dir of agent.yaml) instead`,
      )
    }
    if (!response.ok) throw new Error(`the agent answered ${response.status}`)
    const body = (await response.json()) as DeadLetter[] | { data: DeadLetter[]; nextCursor: string | null }
    // An agent started before an upgrade (not yet restarted) answers every entry, unfiltered, in
    // one array; this one filters too, which keeps that answer right.
    const page = Array.isArray(body) ? { data: body, nextCursor: null } : body
    yield page.data.filter(matches(options))
    cursor = page.nextCursor ?? undefined
  } while (cursor)
}

/**
 * Writes what JSON.stringify(entries, null, 2) would, one page at a time. Nothing is written until
 * the first page is in, so a failure to reach the agent leaves stdout empty.
 */
async function writeJsonArray(pages: AsyncIterable<DeadLetter[]>, io: AgentIo): Promise<void> {
  let first = true
  for await (const page of pages) {
    for (const entry of page) {
      const item = JSON.stringify(entry, null, 2).replaceAll('\n', '\n  ')
      io.stdout(`${first ? '[\n' : ',\n'}  ${item}`)
      first = false
    }
  }
  io.stdout(first ? '[]\n' : '\n]\n')
}

function matches(filter: { reason?: string; device?: string }) {
  return (entry: DeadLetter) =>
    (filter.reason === undefined || entry.reason === filter.reason) &&
    (filter.device === undefined || entry.deviceId === filter.device)
}

function describe(entry: DeadLetter): string {
  const what = entry.punch
    ? `${entry.punch.employeeCode} ${entry.punch.punchType} ${entry.punch.punchedAt}`
    : `raw ${JSON.stringify((entry.raw ?? '').slice(0, 60))}`
  return `${entry.at}  ${entry.deviceId.padEnd(14)} ${entry.reason.padEnd(20)} ${what}  ${entry.detail}`
}

/** `dead-letters list`: what could not be forwarded, and why. */
export const deadLettersListCommand: AgentCommand = async (args, io) => {
  const options = parse(args)
  const pages = deadLetterPages(options, io)
  if (options.json) {
    await writeJsonArray(pages, io)
    return 0
  }
  let none = true
  for await (const page of pages) {
    if (page.length > 0) io.stdout(`${page.map(describe).join('\n')}\n`)
    none &&= page.length === 0
  }
  if (none) io.stdout('no dead letters\n')
  return 0
}

const CSV_COLUMNS = [
  'id',
  'at',
  'deviceId',
  'reason',
  'detail',
  'employeeCode',
  'punchType',
  'punchedAt',
  'punchId',
  'raw',
] as const

/** `dead-letters export --format json|csv`: everything, for a spreadsheet or another system. */
export const deadLettersExportCommand: AgentCommand = async (args, io) => {
  const options = parse(args)
  const format = options.format ?? 'json'
  if (format !== 'json' && format !== 'csv') throw new AgentUsageError('--format must be json or csv')
  const pages = deadLetterPages(options, io)
  if (format === 'json') {
    await writeJsonArray(pages, io)
    return 0
  }
  // csvRow: RFC 4180 quoting, and raw device frames cannot become spreadsheet formulas.
  const row = (e: DeadLetter) =>
    csvRow([
      e.id,
      e.at,
      e.deviceId,
      e.reason,
      e.detail,
      e.punch?.employeeCode,
      e.punch?.punchType,
      e.punch?.punchedAt,
      e.punch?.id,
      e.raw,
    ])
  let header = false
  for await (const page of pages) {
    if (!header) io.stdout(`${csvRow(CSV_COLUMNS)}\n`)
    header = true
    if (page.length > 0) io.stdout(`${page.map(row).join('\n')}\n`)
  }
  return 0
}

/** The agent's answer to a replay; undefined when no agent answers at all. */
async function replayThroughAgent(control: AgentControl, filter: { reason?: string; deviceId?: string }) {
  let response: Response
  try {
    response = await fetch(`${control.url}/dead-letters/replay`, {
      method: 'POST',
      headers: control.headers,
      body: JSON.stringify(filter),
      signal: AbortSignal.timeout(60_000),
    })
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw err
    return undefined
  }
  if (response.status === 401) throw new Error(control.refusal)
  if (!response.ok) throw new Error(`the agent answered ${response.status}`)
  return (await response.json()) as { replayed: number; kept: number }
}

/**
 * `dead-letters replay`: puts the punches of dead letters (all, or of one reason or device) back in
 * the spool, to be sent again once their cause is fixed (an employee added, a clock set). Through
 * the running agent, so that only one process ever writes the spool, with its control token
 * (agent-control.ts: --config agent.yaml or --token-file); with --spool, directly, for an agent
 * that is stopped.
 */
export const deadLettersReplayCommand: AgentCommand = async (args, io) => {
  const options = parseArgs({ args: [...args], options: { ...OPTIONS, ...CONTROL_OPTIONS } }).values
  const filter = {
    ...(options.reason ? { reason: options.reason } : {}),
    ...(options.device ? { deviceId: options.device } : {}),
  }
  let result = options.spool ? undefined : await replayThroughAgent(await agentControl(options, io), filter)
  if (!result) {
    if (!options.spool)
      throw new AgentUsageError('no agent is running: give --spool DIR to replay into its spool directly')
    const log = pino({ level: 'silent' })
    const spool = new Spool({
      dir: options.spool,
      maxBytes: Number.MAX_SAFE_INTEGER,
      chunkPunches: 500,
      log,
      events: new EventBus(log),
    })
    await spool.start()
    const dead = await openDeadLetters(options.spool)
    result = await dead.replay((punches) => spool.append(punches), matches(options))
    await spool.stop()
  }
  const summary = `replayed ${result.replayed} punch(es) into the spool; ${result.kept} dead letter(s) kept`
  io.stdout(options.json ? `${JSON.stringify(result)}\n` : `${summary}\n`)
  return 0
}
