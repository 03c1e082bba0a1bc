import type { AdmsLogRecord } from './adms-attlog.js'
import { WALL_TIME } from './adms-wall-clock.js'

/** One command of a `GET /iclock/getrequest` reply: a `C:<id>:<command>` line. */
export interface AdmsCommand {
  id: string
  /** The text after the second colon, such as `INFO` or `DATA QUERY ATTLOG StartTime=...`. */
  command: string
}

/** Result codes of `POST /iclock/devicecmd`: done, no data or a bad parameter, not supported. */
const ADMS_RETURN = { ok: 0, noData: -1, unsupported: -1002 } as const

/** Command ids are up to 16 letters and digits; a line without one cannot be answered. */
const COMMAND_LINE = /^C:([A-Za-z0-9]{1,16}):(.+)$/

/** The commands of a poll reply (`OK` alone: none), and the lines that were not commands. */
export function parseAdmsCommands(body: string): { commands: AdmsCommand[]; ignored: string[] } {
  const commands: AdmsCommand[] = []
  const ignored: string[] = []
  for (const line of body.split(/\r?\n/)) {
    const text = line.trimEnd()
    if (text === '' || text === 'OK') continue
    const m = COMMAND_LINE.exec(text)
    if (m) commands.push({ id: m[1] as string, command: m[2] as string })
    else ignored.push(text)
  }
  return { commands, ignored }
}

/** What a command can do to the device that runs it. */
export interface AdmsCommandHost {
  records(): readonly AdmsLogRecord[]
  /** The `key=value` lines that follow an INFO result. */
  infoLines(): string[]
  /** Uploads these records as ATTLOG batches, without moving the cursor; false if cut short. */
  uploadQueried(records: AdmsLogRecord[]): Promise<boolean>
  /** Uploads pending records now, whatever Realtime and TransInterval say. */
  uploadPendingNow(): void
  /** Erases the attendance log. */
  clearLog(): void
}

interface AdmsCommandOutcome {
  /** Lines of the devicecmd body: `ID=..&Return=..&CMD=..`, then any details. */
  lines: string[]
  /** REBOOT: the device restarts once its results are posted. */
  reboot: boolean
}

function result(command: AdmsCommand, code: number): string {
  // CMD is the command's first word (DATA, INFO, CLEAR...), in capitals as firmware writes it.
  const word = (command.command.trim().split(/\s+/)[0] ?? '').toUpperCase()
  return `ID=${command.id}&Return=${code}&CMD=${word}`
}

/** `StartTime=YYYY-MM-DD HH:MM:SS<TAB>EndTime=YYYY-MM-DD HH:MM:SS`: the bounds, or undefined. */
function queryRange(text: string): { start: string; end: string } | undefined {
  const m = /^StartTime=([^\t]+)\tEndTime=([^\t]+)$/.exec(text.trim())
  if (!m) return undefined
  const [start, end] = [(m[1] as string).trim(), (m[2] as string).trim()]
  if (!WALL_TIME.test(start) || !WALL_TIME.test(end) || start > end) return undefined
  return { start, end }
}

/**
 * Runs one command as Attendance PUSH 2.x firmware does and says what to report. Unknown commands
 * are answered -1002 (not supported), never ignored: the server must learn that nothing happened.
 */
export async function runAdmsCommand(
  command: AdmsCommand,
  host: AdmsCommandHost,
): Promise<AdmsCommandOutcome> {
  const text = command.command.trim()
  const answer = (code: number, reboot = false): AdmsCommandOutcome => ({
    lines: [result(command, code)],
    reboot,
  })
  if (text === 'INFO') return { lines: [result(command, ADMS_RETURN.ok), ...host.infoLines()], reboot: false }
  if (text === 'CHECK') return answer(ADMS_RETURN.ok)
  if (text === 'LOG') {
    host.uploadPendingNow()
    return answer(ADMS_RETURN.ok)
  }
  if (text === 'CLEAR LOG') {
    // Obeyed, as firmware does: a test can prove that a server never sends it.
    host.clearLog()
    return answer(ADMS_RETURN.ok)
  }
  if (text === 'REBOOT') return answer(ADMS_RETURN.ok, true)
  // Accepted and recorded (commandsReceived), not acted on: the model has no users or shell.
  if (/^shell\s/i.test(text) || /^DATA (UPDATE|DELETE) USERINFO\s/.test(text)) return answer(ADMS_RETURN.ok)
  const query = /^DATA QUERY ATTLOG\s+(.*)$/s.exec(text)
  if (query) {
    const range = queryRange(query[1] as string)
    if (!range) return answer(ADMS_RETURN.noData)
    const matching = host.records().filter((r) => r.time >= range.start && r.time <= range.end)
    if (matching.length === 0) return answer(ADMS_RETURN.noData)
    const uploaded = await host.uploadQueried(matching)
    return answer(uploaded ? ADMS_RETURN.ok : ADMS_RETURN.noData)
  }
  return answer(ADMS_RETURN.unsupported)
}
