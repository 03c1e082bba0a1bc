import type { DevicePunch, FrameParse } from '../punch/device-punch.js'

/**
 * The MQTT JSON payload (docs/decisions/0030-mqtt-json-payload.md):
 * `{"employeeCode": "E001", "punchType": "IN", "punchedAt": "..."}`;
 * `status` may stand for punchType; punchedAt may be local time or absent. A frame may hold one
 * object, an array of them, or (serial) one per line. Other fields are ignored: devices add their own.
 */
function parseRecord(value: unknown): DevicePunch | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'a punch must be a JSON object'
  const r = value as Record<string, unknown>
  const code = r.employeeCode
  if (
    !(typeof code === 'string' || (typeof code === 'number' && Number.isSafeInteger(code))) ||
    String(code).trim() === ''
  ) {
    return 'employeeCode must be a non-empty string'
  }
  const punch: DevicePunch = { employeeCode: String(code).trim() }
  if (r.punchType !== undefined) {
    const type = typeof r.punchType === 'string' ? r.punchType.toUpperCase() : undefined
    if (type !== 'IN' && type !== 'OUT') return 'punchType must be IN or OUT'
    punch.punchType = type
  }
  if (r.status !== undefined) {
    if (
      !(typeof r.status === 'number' || typeof r.status === 'string') ||
      !/^\d{1,3}$/.test(String(r.status))
    ) {
      return 'status must be a small whole number'
    }
    punch.status = String(Number(r.status))
  }
  if (r.punchedAt !== undefined && r.punchedAt !== null) {
    if (typeof r.punchedAt !== 'string') return 'punchedAt must be a string'
    punch.punchedAt = r.punchedAt
  }
  return punch
}

export function parseJsonPunches(frame: string): FrameParse {
  const result: FrameParse = { punches: [], malformed: [] }
  let value: unknown
  try {
    value = JSON.parse(frame)
  } catch {
    // Serial devices may send JSON lines; an MQTT payload is one document.
    const lines = frame.split(/\r?\n/).filter((l) => l.trim() !== '')
    if (lines.length > 1) {
      for (const line of lines) {
        const parsed = parseJsonPunches(line)
        result.punches.push(...parsed.punches)
        result.malformed.push(...parsed.malformed)
      }
      return result
    }
    result.malformed.push({ record: frame, error: 'not JSON' })
    return result
  }
  const records = Array.isArray(value) ? value : [value]
  if (records.length === 0) result.malformed.push({ record: frame, error: 'an empty array' })
  for (const record of records) {
    const parsed = parseRecord(record)
    // A frame that is one document is dead-lettered as the device sent it (white space and number
    // spellings included); an element of an array, as its own JSON text.
    if (typeof parsed === 'string')
      result.malformed.push({
        record: Array.isArray(value) ? recordText(record, frame) : frame,
        error: parsed,
      })
    else result.punches.push(parsed)
  }
  return result
}

/**
 * The record as text for its dead letter. JSON.parse takes nesting JSON.stringify cannot give back
 * (`[[[[...` a few thousand deep overflows the stack): such a record is shown as its frame, so a
 * hostile payload is dead-lettered instead of failing the frame (an MQTT device would resend it
 * for ever, as it is never acknowledged).
 */
function recordText(record: unknown, frame: string): string {
  try {
    return JSON.stringify(record) ?? String(record)
  } catch {
    return frame
  }
}
