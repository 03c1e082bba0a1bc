/**
 * Server commands of the Attendance PUSH protocol: queued for a terminal, handed over when it polls
 * (`GET /iclock/getrequest` answered with `C:<id>:<command>` lines) and reported on with
 * `POST /iclock/devicecmd` (`ID=<id>&Return=<code>&CMD=<word>`).
 *
 * Only commands that read are ever built here: asking for the terminal's counts (INFO) and for its
 * records again (DATA QUERY ATTLOG). Commands that change or clear a terminal (CLEAR LOG, user
 * writes, SHELL, which runs on the terminal's operating system) have no builder, so no input, CLI
 * or configuration can make the agent send one.
 */
export type AdmsCommandRequest =
  | { kind: 'info' }
  /** Wall times in the terminal's zone, `YYYY-MM-DD HH:MM:SS`. */
  | { kind: 'backfill'; from: string; to: string }

const WALL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

/** The command text for a request. */
export function commandText(request: AdmsCommandRequest): string {
  switch (request.kind) {
    case 'info':
      return 'INFO'
    case 'backfill':
      if (!WALL_TIME.test(request.from) || !WALL_TIME.test(request.to))
        throw new Error('backfill times must be YYYY-MM-DD HH:MM:SS')
      // The two conditions are separated by a TAB, as in every key=value list of the protocol.
      return `DATA QUERY ATTLOG StartTime=${request.from}\tEndTime=${request.to}`
  }
}

/** Command ids: at most 16 letters or digits (the protocol's limit). */
const COMMAND_ID = /^[A-Za-z0-9]{1,16}$/

/** The poll answer: `OK` when nothing waits, else one `C:<id>:<command>` line per command. */
export function pollReply(commands: readonly { id: string; text: string }[]): string {
  if (commands.length === 0) return 'OK'
  return `${commands.map((c) => `C:${c.id}:${c.text}`).join('\n')}\n`
}

/** One command result as a terminal reports it. */
interface CommandResult {
  id: string
  /** 0 done; negative: not done (-1 no data or a bad parameter, -1002 not supported, ...). */
  returnCode: number
  /** The command's first word, as echoed (`INFO`, `DATA`, ...). */
  command: string
  /** Further `key=value` lines that came with it (INFO's counts), keys without a leading `~`. */
  details: Record<string, string>
}

/** The most results and detail lines one report is read for; a terminal sends a handful. */
const MAX_RESULTS = 256
const MAX_DETAILS = 128

function pairs(text: string, separator: string): [string, string][] {
  const out: [string, string][] = []
  for (const part of text.split(separator)) {
    const at = part.indexOf('=')
    if (at > 0) out.push([part.slice(0, at).trim().replace(/^~/, ''), part.slice(at + 1).trim()])
  }
  return out
}

/**
 * Reads a `POST /iclock/devicecmd` body. Two layouts exist: one result a line
 * (`ID=1&Return=0&CMD=DATA`, several batched in one body), and a result spread over lines (`ID=32`,
 * `Return=0`, `CMD=Shell`, `Content=...`). Lines after a result that are `key=value` (INFO's
 * `~DeviceName=...`, `UserCount=...`) are its details. A result without a readable id or return
 * code is skipped: nothing can be matched to it.
 */
export function parseCommandResults(body: string): CommandResult[] {
  const results: CommandResult[] = []
  let current:
    | { id?: string; returnCode?: number; command?: string; details: Record<string, string> }
    | undefined
  let details = 0
  const finish = () => {
    if (current?.id !== undefined && current.returnCode !== undefined && results.length < MAX_RESULTS) {
      results.push({
        id: current.id,
        returnCode: current.returnCode,
        command: current.command ?? '',
        details: current.details,
      })
    }
    current = undefined
    details = 0
  }
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim()
    if (line === '') continue
    if (/^ID=/i.test(line)) {
      finish()
      current = { details: {} }
    }
    if (!current) continue
    // `ID=1&Return=0&CMD=INFO` on one line, or one key a line.
    for (const [key, value] of pairs(line, line.includes('&') && /^ID=/i.test(line) ? '&' : '\u0000')) {
      const name = key.toLowerCase()
      if (name === 'id') current.id = COMMAND_ID.test(value) ? value : undefined
      else if (name === 'return') current.returnCode = /^-?\d{1,6}$/.test(value) ? Number(value) : undefined
      else if (name === 'cmd') current.command = value.slice(0, 32)
      else if (details < MAX_DETAILS) {
        current.details[key.slice(0, 64)] = value.slice(0, 256)
        details++
      }
    }
  }
  finish()
  return results
}

/** `k=v,k=v` (a `table=options` upload) or `k=v` lines: the keys without a leading `~`. */
export function parseOptionPairs(body: string): Record<string, string> {
  const out: Record<string, string> = {}
  let count = 0
  for (const [key, value] of pairs(body.replace(/\r?\n/g, ','), ',')) {
    if (count++ >= MAX_DETAILS) break
    out[key.slice(0, 64)] = value.slice(0, 256)
  }
  return out
}
