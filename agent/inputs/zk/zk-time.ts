import { ZkProtocolError } from './zk-protocol-error.js'

/**
 * A device time: the terminal's local wall clock, with no zone. It is never turned into a Date
 * here, since the host's zone need not be the device's.
 */
export interface ZkWallTime {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

/** ZK protocol: device times are 2000–2099 (the packed time keeps only the year's last two digits). */
export const ZK_MIN_YEAR = 2000
export const ZK_MAX_YEAR = 2099

/** Bytes of a real-time event's time: YY MM DD hh mm ss. */
export const ZK_REALTIME_TIME_BYTES = 6

const SECONDS_PER_DAY = 86_400
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0)
}

/** Why the fields are not a device time, or undefined when they are one. */
function invalidReason(t: ZkWallTime): string | undefined {
  const fields = [t.year, t.month, t.day, t.hour, t.minute, t.second]
  if (!fields.every(Number.isInteger)) return 'has a field that is not an integer'
  if (t.year < ZK_MIN_YEAR || t.year > ZK_MAX_YEAR) return `is outside ${ZK_MIN_YEAR}–${ZK_MAX_YEAR}`
  if (t.month < 1 || t.month > 12) return 'has no such month'
  if (t.day < 1 || t.day > daysInMonth(t.year, t.month)) return 'has no such day'
  if (t.hour < 0 || t.hour > 23 || t.minute < 0 || t.minute > 59 || t.second < 0 || t.second > 59) {
    return 'has no such time of day'
  }
  return undefined
}

function check(t: ZkWallTime, what: string): ZkWallTime {
  const reason = invalidReason(t)
  if (reason) throw new ZkProtocolError('zk_bad_time', `${what} ${formatZkWallTime(t)} ${reason}`)
  return t
}

/** "YYYY-MM-DDTHH:mm:ss", the local ISO form (no zone). */
export function formatZkWallTime(t: ZkWallTime): string {
  const p = (n: number, width = 2) => String(n).padStart(width, '0')
  return `${p(t.year, 4)}-${p(t.month)}-${p(t.day)}T${p(t.hour)}:${p(t.minute)}:${p(t.second)}`
}

/**
 * ZK protocol time as a u32: `((Y%100)*12*31 + (M-1)*31 + D-1)*86400 + (h*60+m)*60 + s`, every
 * month counted as 31 days.
 */
export function encodeZkTime(t: ZkWallTime): number {
  check(t, 'the time')
  const days = (t.year % 100) * 12 * 31 + (t.month - 1) * 31 + (t.day - 1)
  return days * SECONDS_PER_DAY + (t.hour * 60 + t.minute) * 60 + t.second
}

/** The inverse of encodeZkTime; a value that is no calendar date (31 February) is an error. */
export function decodeZkTime(value: number): ZkWallTime {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new ZkProtocolError('zk_bad_time', `a ZK time is a u32, got ${value}`)
  }
  let rest = value
  const second = rest % 60
  rest = Math.floor(rest / 60)
  const minute = rest % 60
  rest = Math.floor(rest / 60)
  const hour = rest % 24
  rest = Math.floor(rest / 24)
  const day = (rest % 31) + 1
  rest = Math.floor(rest / 31)
  const month = (rest % 12) + 1
  const year = ZK_MIN_YEAR + Math.floor(rest / 12)
  return check({ year, month, day, hour, minute, second }, `ZK time 0x${value.toString(16)} is`)
}

/** ZK protocol real-time event time: six bytes YY MM DD hh mm ss, the year from 2000. */
export function encodeZkRealtimeTime(t: ZkWallTime): Buffer {
  check(t, 'the time')
  return Buffer.from([t.year - ZK_MIN_YEAR, t.month, t.day, t.hour, t.minute, t.second])
}

export function decodeZkRealtimeTime(bytes: Uint8Array): ZkWallTime {
  if (bytes.length !== ZK_REALTIME_TIME_BYTES) {
    throw new ZkProtocolError('zk_bad_time', `a real-time event time has 6 bytes, got ${bytes.length}`)
  }
  const [yy, month, day, hour, minute, second] = bytes as unknown as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  return check(
    { year: ZK_MIN_YEAR + yy, month, day, hour, minute, second },
    `real-time time ${Buffer.from(bytes).toString('hex')} is`,
  )
}
