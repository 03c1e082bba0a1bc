import { formatOffsetSeconds, WALL_TIME } from './adms-wall-clock.js'

/**
 * How many TAB-separated fields an ATTLOG upload line has: firmware versions differ. 5: PIN, time,
 * status, verify, workcode; 7: and two reserved fields; 9: and MaskFlag, Temperature (the
 * temperature-screening terminals); 12: and ConvTemperature, TimeOffset, ExtendData.
 */
export type AttlogFieldCount = 5 | 7 | 9 | 12
export const ATTLOG_FIELD_COUNTS: readonly AttlogFieldCount[] = [5, 7, 9, 12]

/** One punch in the device's attendance log. */
export interface AdmsLogRecord {
  pin: string
  /** Local wall time `YYYY-MM-DD HH:MM:SS`, as the device showed it. */
  time: string
  /** 0 check-in, 1 check-out, 2 break-out, 3 break-in, 4 overtime-in, 5 overtime-out. */
  status: number
  /** 1 fingerprint, 15 face, 4 card, 0 password. */
  verify: number
  workcode: number
  /** The device's upload cursor value for this record: strictly increasing, opaque to the server. */
  stamp: number
  /** The upload line, in the device's field count, without a line end. */
  line: string
  /** Whether the server has it: by an `OK: n` reply, or by a handshake ATTLOGStamp at or above it. */
  acknowledged: boolean
  acknowledgedBy: 'reply' | 'stamp' | undefined
}

/** The fields of a record before it has a stamp. */
export interface AttlogFields {
  pin: string
  time: string
  status: number
  verify: number
  workcode: number
}

/** What a body temperature terminal writes when nobody is screened: plausible, fixed values. */
const MASK_FLAG = 0
const TEMPERATURE = '36.5'
const CONV_TEMPERATURE = '97.7'
/** ExtendData is base64 of a vendor blob; a short fixed one is enough for a server to carry along. */
const EXTEND_DATA = Buffer.from('{"ver":1}').toString('base64')

/** The upload line of a record (Attendance PUSH, table=ATTLOG), `zoneMinutes` for TimeOffset. */
export function formatAttlogLine(fields: AttlogFields, count: AttlogFieldCount, zoneMinutes: number): string {
  const values: (string | number)[] = [fields.pin, fields.time, fields.status, fields.verify, fields.workcode]
  if (count >= 7) values.push(0, 0)
  if (count >= 9) values.push(MASK_FLAG, TEMPERATURE)
  if (count >= 12) values.push(CONV_TEMPERATURE, formatOffsetSeconds(zoneMinutes), EXTEND_DATA)
  return values.join('\t')
}

/** The numeric fields of a line, in order, with what a terminal fills in when one is missing. */
const NUMERIC_FIELDS = [
  ['status', 0],
  ['verify', 1],
  ['workcode', 0],
] as const

/**
 * Reads a ready-made ATTLOG line (`PIN \t time [\t status \t verify \t workcode ...]`, as the
 * simulator's `deviceRecord` writes them); fields after the fifth are dropped, the device writes
 * its own. Throws on a line that is not one.
 */
export function parseAttlogLine(line: string): AttlogFields {
  const parts = line.replace(/\r?\n$/, '').split('\t')
  const [pin, time] = parts
  if (!pin || /[\r\n]/.test(pin) || time === undefined || !WALL_TIME.test(time))
    throw new TypeError(`not an ATTLOG line (PIN, TAB, YYYY-MM-DD HH:MM:SS...): ${JSON.stringify(line)}`)
  const fields: AttlogFields = { pin, time, status: 0, verify: 1, workcode: 0 }
  NUMERIC_FIELDS.forEach(([name, fallback], k) => {
    const text = parts[k + 2]
    if (text === undefined || text === '') {
      fields[name] = fallback
      return
    }
    if (!/^\d{1,9}$/.test(text)) throw new TypeError(`ATTLOG ${name} "${text}" is not a number`)
    fields[name] = Number(text)
  })
  return fields
}
