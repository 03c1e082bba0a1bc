import type { AdmsTiming } from './adms-schedule.js'
import { parseAdmsTimeZone } from './adms-wall-clock.js'

/** What a device assumes before any handshake reply said otherwise (firmware defaults). */
const DEFAULT_ERROR_DELAY_SECONDS = 30
const DEFAULT_DELAY_SECONDS = 10
const DEFAULT_TRANS_INTERVAL_MINUTES = 1
/**
 * Firmware sleeps at least this long between requests, whatever the server says: a `Delay=0` would
 * otherwise be a device hammering its server.
 */
const MIN_DELAY_SECONDS = 1

/** The handshake reply (`GET /iclock/cdata?options=all`), as the device understood it. */
export interface AdmsServerOptions {
  /** Every `key=value` line, as sent (the first `=` splits). */
  raw: Readonly<Record<string, string>>
  /**
   * The server's cursor for this device's attendance log: upload only records with a greater
   * stamp. 0 for `None`, `0`, a missing key, or a value that is not a number (upload everything:
   * a duplicate is harmless, a record skipped is lost).
   */
  attLogStamp: number
  errorDelaySeconds: number
  delaySeconds: number
  transIntervalMinutes: number
  /** `Realtime=1`: upload each record as soon as it is made; else every TransInterval minutes. */
  realtime: boolean
  /** Minutes east of UTC; undefined when the reply has no TimeZone the device can read. */
  timeZoneMinutes: number | undefined
}

function atLeastOne(text: string | undefined, fallback: number): number {
  if (text === undefined || !/^\d{1,6}$/.test(text.trim())) return fallback
  return Math.max(MIN_DELAY_SECONDS, Number(text.trim()))
}

/**
 * Reads a handshake reply body: a `GET OPTION FROM: <SN>` line, then `key=value` lines in any
 * order, LF or CRLF. Keys the device does not know are kept in `raw` and otherwise ignored.
 */
export function parseAdmsServerOptions(body: string): AdmsServerOptions {
  const raw: Record<string, string> = {}
  for (const line of body.split(/\r?\n/)) {
    const at = line.indexOf('=')
    if (at <= 0) continue
    raw[line.slice(0, at).trim()] = line.slice(at + 1).trim()
  }
  const stamp = raw.ATTLOGStamp
  // `Realtime` missing: firmware uploads in real time by default.
  const realtime = raw.Realtime === undefined ? true : raw.Realtime === '1'
  return {
    raw,
    attLogStamp:
      stamp !== undefined && /^\d+$/.test(stamp) && Number.isSafeInteger(Number(stamp)) ? Number(stamp) : 0,
    errorDelaySeconds: atLeastOne(raw.ErrorDelay, DEFAULT_ERROR_DELAY_SECONDS),
    delaySeconds: atLeastOne(raw.Delay, DEFAULT_DELAY_SECONDS),
    transIntervalMinutes: atLeastOne(raw.TransInterval, DEFAULT_TRANS_INTERVAL_MINUTES),
    realtime,
    timeZoneMinutes: raw.TimeZone === undefined ? undefined : parseAdmsTimeZone(raw.TimeZone),
  }
}

/** The delays a device keeps to, in ms: the server's (firmware defaults before any), times `timeScale`. */
export function admsTiming(options: AdmsServerOptions | undefined, timeScale: number): AdmsTiming {
  return {
    realtime: options?.realtime ?? true,
    errorDelayMs: (options?.errorDelaySeconds ?? DEFAULT_ERROR_DELAY_SECONDS) * 1000 * timeScale,
    delayMs: (options?.delaySeconds ?? DEFAULT_DELAY_SECONDS) * 1000 * timeScale,
    transIntervalMs: (options?.transIntervalMinutes ?? DEFAULT_TRANS_INTERVAL_MINUTES) * 60_000 * timeScale,
  }
}
