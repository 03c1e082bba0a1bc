import { parse } from 'csv-parse/sync'
import type { DevicePunch, FrameParse } from '../punch/device-punch.js'

export interface CsvColumns {
  employeeCode: number
  punchedAt?: number
  status?: number
  punchType?: number
}

/** One CSV record per line, with the device's column map (zero-based). */
export function csvPunchParser(columns: CsvColumns, delimiter = ','): (frame: string) => FrameParse {
  return (frame) => {
    const result: FrameParse = { punches: [], malformed: [] }
    for (const line of frame.split(/\r?\n/)) {
      if (line.trim() === '') continue
      let fields: string[]
      try {
        fields = (parse(line, { delimiter, relax_column_count: true }) as string[][])[0] ?? []
      } catch (err) {
        result.malformed.push({ record: line, error: `not a CSV record (${(err as Error).message})` })
        continue
      }
      const field = (i: number | undefined) => (i === undefined ? undefined : fields[i]?.trim())
      const code = field(columns.employeeCode)
      if (!code) {
        result.malformed.push({ record: line, error: `no employee code in column ${columns.employeeCode}` })
        continue
      }
      const punch: DevicePunch = { employeeCode: code }
      const type = field(columns.punchType)?.toUpperCase()
      if (type === 'IN' || type === 'OUT') punch.punchType = type
      else if (type) {
        result.malformed.push({ record: line, error: `punch type "${type.slice(0, 20)}" is not IN or OUT` })
        continue
      }
      const status = field(columns.status)
      if (status) punch.status = /^\d{1,3}$/.test(status) ? String(Number(status)) : status
      const punchedAt = field(columns.punchedAt)
      if (punchedAt) punch.punchedAt = punchedAt
      result.punches.push(punch)
    }
    if (result.punches.length === 0 && result.malformed.length === 0) {
      result.malformed.push({ record: frame, error: 'the frame holds no record' })
    }
    return result
  }
}
