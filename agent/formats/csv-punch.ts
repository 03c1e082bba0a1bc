import { parse } from 'csv-parse/sync'
import type { DevicePunch, FrameParse } from '../punch/device-punch.js'

interface CsvColumns {
  employeeCode: number
  punchedAt?: number
  status?: number
  punchType?: number
}

/**
 * One CSV record per line, with the device's column map (zero-based). A line ends at LF, CR-LF or a
 * lone CR: csv-parse takes a lone CR for a record delimiter too, and a line it read as two records
 * must not lose the second.
 */
export function csvPunchParser(columns: CsvColumns, delimiter = ','): (frame: string) => FrameParse {
  // A record too short for the map was cut off (line noise, a disconnect): a punch made of it would
  // get the receipt time instead of the device's, so it is malformed instead.
  const needed = Math.max(
    ...[columns.employeeCode, columns.punchedAt, columns.status, columns.punchType].map((c) => c ?? 0),
  )
  return (frame) => {
    const result: FrameParse = { punches: [], malformed: [] }
    for (const line of frame.split(/\r\n|\r|\n/)) {
      if (line.trim() === '') continue
      let records: string[][]
      try {
        records = parse(line, { delimiter, relax_column_count: true }) as string[][]
      } catch (err) {
        result.malformed.push({ record: line, error: `not a CSV record (${(err as Error).message})` })
        continue
      }
      if (records.length === 0) result.malformed.push({ record: line, error: 'not a CSV record' })
      for (const fields of records) {
        const parsed = readRecord(fields, columns, needed)
        if (typeof parsed === 'string') result.malformed.push({ record: line, error: parsed })
        else result.punches.push(parsed)
      }
    }
    if (result.punches.length === 0 && result.malformed.length === 0) {
      result.malformed.push({ record: frame, error: 'the frame holds no record' })
    }
    return result
  }
}

function readRecord(fields: string[], columns: CsvColumns, needed: number): DevicePunch | string {
  if (fields.length <= needed) {
    return `the record has ${fields.length} field(s); the column map reads column ${needed}`
  }
  const field = (i: number | undefined) => (i === undefined ? undefined : fields[i]?.trim())
  const code = field(columns.employeeCode)
  if (!code) return `no employee code in column ${columns.employeeCode}`
  const punch: DevicePunch = { employeeCode: code }
  const type = field(columns.punchType)?.toUpperCase()
  if (type === 'IN' || type === 'OUT') punch.punchType = type
  else if (type) return `punch type "${type.slice(0, 20)}" is not IN or OUT`
  const status = field(columns.status)
  if (status) punch.status = /^\d{1,3}$/.test(status) ? String(Number(status)) : status
  const punchedAt = field(columns.punchedAt)
  if (punchedAt) punch.punchedAt = punchedAt
  return punch
}
