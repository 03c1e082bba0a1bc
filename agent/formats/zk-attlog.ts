import type { DevicePunch, FrameParse } from '../punch/device-punch.js'

// ZKTeco/eSSL ATTLOG (docs/decisions/0028-zk-attlog-and-status-codes.md):
// PIN \t YYYY-MM-DD HH:mm:ss \t status \t verify \t workcode ...
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/
/**
 * Longer than any record a terminal writes (twelve fields with a base64 GPS extension stay under a
 * kilobyte): such a line is not read at all, only kept (truncated) in dead letters.
 */
const MAX_ATTLOG_LINE_CHARS = 4096

function parseLine(line: string): DevicePunch | string {
  if (line.length > MAX_ATTLOG_LINE_CHARS)
    return `the line is longer than ${MAX_ATTLOG_LINE_CHARS} characters`
  const fields = line.split('\t').map((f) => f.trim())
  if (fields.length < 3)
    return `expected PIN, time and status separated by tabs, got ${fields.length} field(s)`
  const [pin, time, status] = fields as [string, string, string]
  if (pin === '') return 'the PIN is empty'
  if (!TIME.test(time)) return `"${time.slice(0, 40)}" is not a YYYY-MM-DD HH:mm:ss time`
  if (!/^\d{1,3}$/.test(status)) return `status "${status.slice(0, 20)}" is not a number`
  return { employeeCode: pin, punchedAt: time, status: String(Number(status)) }
}

/** One or more ATTLOG lines (an MQTT payload may carry several; a serial frame is one). */
export function parseZkAttlog(frame: string): FrameParse {
  const result: FrameParse = { punches: [], malformed: [] }
  for (const line of frame.split(/\r?\n/)) {
    if (line.trim() === '') continue
    const parsed = parseLine(line)
    if (typeof parsed === 'string') result.malformed.push({ record: line, error: parsed })
    else result.punches.push(parsed)
  }
  if (result.punches.length === 0 && result.malformed.length === 0) {
    result.malformed.push({ record: frame, error: 'the frame holds no record' })
  }
  return result
}
