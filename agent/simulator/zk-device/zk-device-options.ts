import type { ZkRecordSize } from './zk-attendance-log.js'
import type { ZkEventSize } from './zk-attlog-event.js'
import type { LocalTimeText, WallTime } from './zk-time.js'

/** Faults a test switches on and off while the device runs (`device.faults.x = ...`). */
export interface ZkDeviceFaults {
  /** Every reply (and every packet of a chunk) waits this long first; 0 = none. */
  replyDelayMs: number
  /**
   * After this many chunks (CMD_DATA_RDY) of one read, the next chunk is cut halfway: over TCP the
   * connection is closed mid-DATA; over UDP the session ends after half its DATA packets. null = never.
   */
  dropAfterChunks: number | null
  /**
   * A CONNECT while another client's session is open is answered CMD_ACK_ERROR (and its TCP
   * connection closed): one session at a time, as terminals allow (node-zklib#43). On by default.
   */
  refuseSecondSession: boolean
  /** 0 = off; n = every TCP frame goes out in random segments of 1 to n bytes. */
  splitTcpReplies: number
  /** Every frame ready in the same turn (a chunk's three packets, events) goes out in one TCP write. */
  mergeTcpReplies: boolean
}

export interface ZkDeviceOptions {
  /** Default 127.0.0.1. */
  host?: string
  /** TCP and UDP on this port number; 0 (default) = any free port, then `device.port`. */
  port?: number
  serialNumber?: string
  platform?: string
  /** CMD_GET_VERSION's answer. */
  firmware?: string
  /** `~ZKFPVersion`. */
  fingerprintVersion?: string
  /** More CMD_OPTIONS_RRQ names and values (`~DeviceName`, `~OEMVendor`, `WorkCode`...). */
  options?: Record<string, string>
  /** 0 = none (default). */
  commKey?: number
  /** Default 40. */
  recordSize?: ZkRecordSize
  /** EF_ATTLOG event data size; default 32 for 40-byte records, 12 for 16, 10 for 8. */
  eventSize?: ZkEventSize
  /** Attendance record capacity (default 100,000). */
  recordCapacity?: number
  /** User capacity (default 3,000). */
  userCapacity?: number
  /** The clock's first wall time (default: the host's UTC wall time). */
  time?: WallTime | LocalTimeText
  /** The host clock in ms (default Date.now): the device clock runs with it. */
  now?: () => number
  /** Random numbers in [0, 1) for session ids and split sizes (default Math.random). */
  random?: () => number
  /** Datasets up to this many bytes (size prefix included) come whole in one CMD_DATA (default 1016). */
  directDataLimit?: number
  /** Data bytes per UDP CMD_DATA packet of a chunk (default 1024, pyzk's recv(1024 + 8)). */
  udpPacketData?: number
  /** A UDP session unheard of this long (host ms) no longer holds the device (default 60,000). */
  udpSessionIdleMs?: number
  faults?: Partial<ZkDeviceFaults>
}

export interface ZkDeviceStats {
  /** CONNECTs that opened a session. */
  sessions: number
  /** CONNECTs refused because another session was open. */
  sessionsRefused: number
  authFailures: number
  /** Requests ignored for a checksum that does not add up. */
  badChecksums: number
  /** TCP connections closed for bytes that are not ZK framing. */
  badFrames: number
  /** Chunks (CMD_DATA_RDY) answered whole, counted as their answer starts out. */
  chunks: number
  /** Connections or sessions cut by the dropAfterChunks fault. */
  drops: number
  eventsSent: number
  /** CMD_ACK_OK packets from clients (their acknowledgements of events). */
  eventAcks: number
}

export function emptyZkDeviceStats(): ZkDeviceStats {
  return {
    sessions: 0,
    sessionsRefused: 0,
    authFailures: 0,
    badChecksums: 0,
    badFrames: 0,
    chunks: 0,
    drops: 0,
    eventsSent: 0,
    eventAcks: 0,
  }
}

/** A punch made at the terminal. */
export interface ZkPunch {
  userId: string
  /** Default: the device clock now. */
  time?: WallTime | LocalTimeText
  /** Default 1 (fingerprint). */
  verify?: number
  /** Default 0 (check-in). */
  state?: number
  workcode?: number
}
