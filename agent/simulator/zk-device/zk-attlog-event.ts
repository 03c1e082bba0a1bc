import type { ZkRecordFields, ZkRecordSize } from './zk-attendance-log.js'
import { encodeEventTime } from './zk-time.js'

/**
 * Sizes of an EF_ATTLOG realtime event's data (research notes, "Realtime"; pyzk live_capture):
 * 10 `<H B B 6s>` and 14 (+4 B) with the u16 uid, 12 `<I B B 6s>` with a u32 user id, 32 `<24s B B
 * 6s>` with the user id as text, and 36, 37, 52 with 4, 5 or 20 bytes more.
 */
export type ZkEventSize = 10 | 12 | 14 | 32 | 36 | 37 | 52
export const ZK_EVENT_SIZES: readonly ZkEventSize[] = [10, 12, 14, 32, 36, 37, 52]

/** The event size a terminal of each record format sends unless told otherwise. */
export function defaultEventSize(recordSize: ZkRecordSize): ZkEventSize {
  return recordSize === 40 ? 32 : recordSize === 16 ? 12 : 10
}

/** The data of the cmd 500 packet that reports a new punch (zk-protocol `realtime.md`). */
export function encodeAttlogEvent(record: ZkRecordFields, size: ZkEventSize): Buffer {
  const out = Buffer.alloc(size)
  let at: number
  if (size === 10 || size === 14) {
    out.writeUInt16LE(record.uid, 0)
    at = 2
  } else if (size === 12) {
    out.writeUInt32LE(Number(record.userId) >>> 0, 0)
    at = 4
  } else {
    Buffer.from(record.userId, 'ascii').subarray(0, 24).copy(out, 0)
    at = 24
  }
  out.writeUInt8(record.verify, at)
  out.writeUInt8(record.state, at + 1)
  encodeEventTime(record.time).copy(out, at + 2)
  return out
}
