import { decodeZkTime, encodeZkTime, formatLocalTime, type LocalTimeText, type WallTime } from './zk-time.js'

/**
 * Attendance record sizes (research notes, "Dataset"): 40 bytes on TFT and newer firmware, 16 on
 * some, 8 on old black-and-white terminals.
 */
export type ZkRecordSize = 40 | 16 | 8
const ZK_RECORD_SIZES: readonly ZkRecordSize[] = [40, 16, 8]

/** A record as the device writes it. */
export interface ZkRecordFields {
  uid: number
  userId: string
  time: WallTime
  /** 0 password, 1 fingerprint, 2 card, 15 face... */
  verify: number
  /** 0 check-in, 1 check-out, 2 break-out, 3 break-in, 4 OT-in, 5 OT-out. */
  state: number
  workcode: number
}

/** A record as read back from the log. */
export interface ZkLogRecord {
  uid: number
  userId: string
  time: LocalTimeText
  verify: number
  state: number
  workcode: number
}

/**
 * The terminal's attendance log, kept as the bytes CMD_DATA_WRRQ returns so that a log of 100,000
 * records is cheap to make and to read. The record layouts (research notes; zk-protocol
 * `data-record.md`):
 * - 40 B: u16 uid, 24 B user id ASCII NUL-padded, u8 verify @26, u32 time @27, u8 state @31,
 *   8 B reserved (`00 00 00 00 FF 00 00 00` in zk-protocol's example);
 * - 16 B: u32 user id, u32 time, u8 verify, u8 state, 2 B reserved, u32 workcode;
 * - 8 B: u16 uid, u8 verify, u32 time, u8 state.
 */
export class ZkAttendanceLog {
  private bytes: Buffer
  private used = 0

  constructor(
    readonly recordSize: ZkRecordSize,
    readonly capacity: number,
  ) {
    if (!ZK_RECORD_SIZES.includes(recordSize)) throw new TypeError('a record is 40, 16 or 8 bytes')
    this.bytes = Buffer.alloc(recordSize * Math.min(capacity, 1024))
  }

  get count(): number {
    return this.used / this.recordSize
  }

  get free(): number {
    return this.capacity - this.count
  }

  /** Throws when the record cannot be written in this format, or the log is full. */
  append(record: ZkRecordFields): void {
    if (this.count >= this.capacity) throw new RangeError('the attendance log is full')
    const size = this.recordSize
    const time = encodeZkTime(record.time)
    if (this.used + size > this.bytes.length) {
      const grown = Buffer.alloc(Math.min(this.capacity * size, Math.max(this.bytes.length * 2, size * 1024)))
      this.bytes.copy(grown, 0, 0, this.used)
      this.bytes = grown
    }
    const at = this.used
    const b = this.bytes
    b.fill(0, at, at + size)
    if (size === 40) {
      if (record.userId.length > 24)
        throw new RangeError(`user id "${record.userId}" is longer than 24 bytes`)
      b.writeUInt16LE(record.uid, at)
      b.write(record.userId, at + 2, 24, 'ascii')
      b.writeUInt8(record.verify, at + 26)
      b.writeUInt32LE(time, at + 27)
      b.writeUInt8(record.state, at + 31)
      b.writeUInt8(0xff, at + 36)
    } else if (size === 16) {
      if (!/^\d{1,10}$/.test(record.userId) || Number(record.userId) > 0xffffffff)
        throw new RangeError(`16-byte records hold a numeric user id, not "${record.userId}"`)
      b.writeUInt32LE(Number(record.userId), at)
      b.writeUInt32LE(time, at + 4)
      b.writeUInt8(record.verify, at + 8)
      b.writeUInt8(record.state, at + 9)
      b.writeUInt32LE(record.workcode >>> 0, at + 12)
    } else {
      b.writeUInt16LE(record.uid, at)
      b.writeUInt8(record.verify, at + 2)
      b.writeUInt32LE(time, at + 3)
      b.writeUInt8(record.state, at + 7)
    }
    this.used += size
  }

  clear(): void {
    this.used = 0
  }

  /** The records' bytes, oldest first, as the dataset carries them after its size. */
  encoded(): Buffer {
    return Buffer.from(this.bytes.subarray(0, this.used))
  }

  /** The records, oldest first; 8-byte records name the user by uid, resolved with `userIdOf`. */
  records(userIdOf: (uid: number) => string | undefined = () => undefined): ZkLogRecord[] {
    const out: ZkLogRecord[] = []
    const b = this.bytes
    for (let at = 0; at < this.used; at += this.recordSize) {
      if (this.recordSize === 40) {
        const raw = b.subarray(at + 2, at + 26)
        const end = raw.indexOf(0)
        out.push({
          uid: b.readUInt16LE(at),
          userId: raw.subarray(0, end < 0 ? 24 : end).toString('ascii'),
          time: formatLocalTime(decodeZkTime(b.readUInt32LE(at + 27))),
          verify: b[at + 26]!,
          state: b[at + 31]!,
          workcode: 0,
        })
      } else if (this.recordSize === 16) {
        out.push({
          uid: 0,
          userId: String(b.readUInt32LE(at)),
          time: formatLocalTime(decodeZkTime(b.readUInt32LE(at + 4))),
          verify: b[at + 8]!,
          state: b[at + 9]!,
          workcode: b.readUInt32LE(at + 12),
        })
      } else {
        const uid = b.readUInt16LE(at)
        out.push({
          uid,
          userId: userIdOf(uid) ?? String(uid),
          time: formatLocalTime(decodeZkTime(b.readUInt32LE(at + 3))),
          verify: b[at + 2]!,
          state: b[at + 7]!,
          workcode: 0,
        })
      }
    }
    return out
  }
}
