import type { AttlogFieldCount } from './adms-attlog.js'
import type { AdmsDeviceInfo } from './adms-device-info.js'

export interface AdmsDeviceOptions {
  /** The server's base URL, such as http://192.168.1.10:8081. */
  url: string
  serialNumber: string
  /** `FWVersion` and the first INFO field; default `Ver 8.0.4.2-20191105`. */
  firmware?: string
  /** `~DeviceName` in INFO. */
  model?: string
  /** The handshake's pushver (default 2.4.1); from 2.4 on, a ping goes between batches. */
  pushVersion?: string
  /** Records per ATTLOG upload (default 100). */
  batchSize?: number
  /** Fields per ATTLOG line (default 7). */
  fields?: AttlogFieldCount
  /** After every line of a POST body (default LF; some firmware writes CRLF). */
  lineEnding?: '\n' | '\r\n'
  /**
   * Of uploads and command results: text/plain (default), application/x-www-form-urlencoded or
   * application/push;charset=UTF-8 as firmware versions send, or null for none.
   */
  contentType?: string | null
  /** Multiplies every delay the server asks for: 1 as firmware does, such as 0.01 in tests. */
  timeScale?: number
  /** Per request (default 20 s). */
  requestTimeoutMs?: number
  /** The zone before a handshake reply gives one, minutes east of UTC (default 0). */
  initialTimeZoneMinutes?: number
  /** The host clock, ms (Date.now by default); the device's clock is this plus the server's offset. */
  now?: () => number
  /** Notices for the person watching: failures (once per outage), recoveries, reboots. */
  log?: (message: string) => void
  /**
   * The first record's stamp. By default the host clock in ms: like a firmware stamp it grows with
   * time, so a later run with the same serial number starts above what the server has.
   */
  firstStamp?: number
  /** What INFO reports: counts, capacities, IP, MAC, platform... */
  info?: Partial<AdmsDeviceInfo>
}

/** A punch made on the device's keypad or sensor. */
export interface AdmsPunch {
  pin: string
  /** 0 check-in, 1 check-out, 2 break-out, 3 break-in, 4 overtime-in, 5 overtime-out. */
  status: number
  /** 1 fingerprint (default), 15 face, 4 card, 0 password. */
  verify?: number
  workcode?: number
  /** When it happened, host ms (default now); written in the device's clock and zone. */
  at?: number
}

export interface AdmsDeviceStats {
  /** Successful handshakes. */
  handshakes: number
  /** ATTLOG posts, DATA QUERY uploads included. */
  batchesPosted: number
  /** Posts of a batch already posted and not acknowledged. */
  batchesResent: number
  /** Records acknowledged by an `OK: n` reply (not those a handshake stamp passed over). */
  recordsAcknowledged: number
  polls: number
  pings: number
  commandResultsPosted: number
  /** Requests that failed: no reply, a status other than 200, an upload not acknowledged. */
  failures: number
  lastFailure: string | undefined
}

export function emptyAdmsDeviceStats(): AdmsDeviceStats {
  return {
    handshakes: 0,
    batchesPosted: 0,
    batchesResent: 0,
    recordsAcknowledged: 0,
    polls: 0,
    pings: 0,
    commandResultsPosted: 0,
    failures: 0,
    lastFailure: undefined,
  }
}
