/**
 * Device times are local wall times with no zone (the terminal has none): carried here as ISO local
 * strings `YYYY-MM-DDTHH:mm:ss`, or as their six fields, never as a Date in the host's zone.
 *
 * The emulator keeps its own codecs, though agent/inputs/zk/ has the same ones: it is the device side,
 * written apart from the client so that a misreading of the protocol shows as a disagreement between
 * the two (docs/development/zk-protocol.md), not as a shared bug both tests pass.
 */
export interface WallTime {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
}

/** `YYYY-MM-DDTHH:mm:ss`. */
export type LocalTimeText = string

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0')
}

export function formatLocalTime(t: WallTime): LocalTimeText {
  return `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** The fields of a wall time given either way; throws on anything else or an impossible date. */
export function toWallTime(time: WallTime | LocalTimeText): WallTime {
  let t: WallTime
  if (typeof time === 'string') {
    const m = LOCAL_TIME.exec(time)
    if (!m) throw new TypeError(`"${time}" is not a YYYY-MM-DDTHH:mm:ss wall time`)
    t = {
      year: Number(m[1]),
      month: Number(m[2]),
      day: Number(m[3]),
      hour: Number(m[4]),
      minute: Number(m[5]),
      second: Number(m[6]),
    }
  } else t = time
  // Checked field by field: cheap enough for logs of 100,000 records.
  const ok =
    Number.isInteger(t.year) &&
    Number.isInteger(t.month) &&
    Number.isInteger(t.day) &&
    Number.isInteger(t.hour) &&
    Number.isInteger(t.minute) &&
    Number.isInteger(t.second) &&
    t.month >= 1 &&
    t.month <= 12 &&
    t.day >= 1 &&
    t.day <= daysInMonth(t.year, t.month) &&
    t.hour >= 0 &&
    t.hour <= 23 &&
    t.minute >= 0 &&
    t.minute <= 59 &&
    t.second >= 0 &&
    t.second <= 59
  if (!ok) throw new RangeError(`${JSON.stringify(time)} is no date and time`)
  return t
}

/**
 * A wall time as milliseconds on a zone-free scale (its fields read as if UTC): only for
 * arithmetic and ordering between wall times, never an instant.
 */
export function naiveMs(t: WallTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second)
}

export function fromNaiveMs(ms: number): WallTime {
  const d = new Date(ms)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  }
}

/**
 * ZK protocol time (zk-protocol `terminal.md`, "Get Time"; ZK SDK EncodeTime): every month counted
 * as 31 days, years 2000-2099 only:
 * `((Y % 100) * 12 * 31 + (M - 1) * 31 + D - 1) * 86400 + (h * 60 + m) * 60 + s`.
 */
export function encodeZkTime(t: WallTime): number {
  if (t.year < 2000 || t.year > 2099) throw new RangeError(`the year ${t.year} is outside 2000-2099`)
  return (
    ((t.year % 100) * 12 * 31 + (t.month - 1) * 31 + t.day - 1) * 86400 +
    (t.hour * 60 + t.minute) * 60 +
    t.second
  )
}

/** The fields of a ZK protocol time (ZK SDK DecodeTime); not checked to be a real date. */
export function decodeZkTime(value: number): WallTime {
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
  const year = Math.floor(rest / 12) + 2000
  return { year, month, day, hour, minute, second }
}

/** Realtime events carry the time as six bytes YY MM DD hh mm ss (research notes, "Realtime"). */
export function encodeEventTime(t: WallTime): Buffer {
  return Buffer.from([t.year % 100, t.month, t.day, t.hour, t.minute, t.second])
}
