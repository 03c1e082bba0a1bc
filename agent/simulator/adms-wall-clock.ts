/**
 * A ZKTeco/eSSL terminal's clock as its ADMS (iclock PUSH) firmware keeps it: set from the HTTP
 * `Date` header of the handshake reply, and shown in the `TimeZone` the same reply gives. The
 * device has no idea of daylight saving or IANA zones: it writes local wall time = UTC + a fixed
 * offset, which is why the server must read its records in that offset too.
 */

/** ADMS handshake `TimeZone`: values this small are hours; larger ones are minutes (330 = +05:30). */
const MAX_HOURS_FORM = 14
/** No zone on Earth is further from UTC than this (UTC+14, UTC-12); anything else is a bad value. */
const MAX_ZONE_MINUTES = 14 * 60

/**
 * The zone of a handshake's `TimeZone` in minutes east of UTC, or undefined when it is no zone.
 * Whole hours come as hours (`8`, `-5`); half and quarter hours as minutes (`330`, `345`, `-210`).
 */
export function parseAdmsTimeZone(text: string): number | undefined {
  const trimmed = text.trim()
  if (!/^[+-]?\d{1,4}$/.test(trimmed)) return undefined
  const value = Number(trimmed)
  const minutes = Math.abs(value) <= MAX_HOURS_FORM ? value * 60 : value
  return Math.abs(minutes) <= MAX_ZONE_MINUTES ? minutes : undefined
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0')
}

/** `YYYY-MM-DD HH:MM:SS`, the wall time of ATTLOG records, of a UTC instant in a fixed offset. */
export function formatWallTime(utcMs: number, zoneMinutes: number): string {
  const d = new Date(utcMs + zoneMinutes * 60_000)
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  )
}

/** ATTLOG's `TimeOffset` field (12-field records): the zone in seconds, signed, such as `+19800`. */
export function formatOffsetSeconds(zoneMinutes: number): string {
  return `${zoneMinutes < 0 ? '-' : '+'}${Math.abs(zoneMinutes) * 60}`
}

/** The wall-time shape of ATTLOG records and DATA QUERY bounds. */
export const WALL_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/

/**
 * The device's clock: the host clock plus the offset learnt from the last handshake's `Date`
 * (RFC 7231 §7.1.1.2, IMF-fixdate, always GMT), and the zone learnt from its `TimeZone`.
 */
export class AdmsWallClock {
  /** Device time minus host time, ms. 0 until a handshake reply carries a Date. */
  offsetMs = 0

  constructor(
    /** Minutes east of UTC. */
    public zoneMinutes: number,
    private readonly hostNow: () => number,
  ) {}

  /** The device's UTC time now, ms. */
  now(): number {
    return this.hostNow() + this.offsetMs
  }

  /** The wall time the device shows at host instant `hostMs` (now by default). */
  wallTime(hostMs = this.hostNow()): string {
    return formatWallTime(hostMs + this.offsetMs, this.zoneMinutes)
  }

  /**
   * Sets the clock from a reply's Date header, received at host time `receivedAt`. Returns false
   * (the clock unchanged) when the header is missing or not a date.
   */
  setFromDate(date: string | undefined, receivedAt: number): boolean {
    if (date === undefined) return false
    const serverMs = Date.parse(date)
    if (Number.isNaN(serverMs)) return false
    this.offsetMs = serverMs - receivedAt
    return true
  }
}
