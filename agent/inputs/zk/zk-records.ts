import { type ZkErrorCode, ZkProtocolError } from './zk-protocol-error.js'
import { decodeZkTime, type ZkWallTime } from './zk-time.js'

/** ZK protocol attendance record sizes: 40 (TFT and newer), 16, and 8 (old black-and-white). */
export type ZkRecordBytes = 40 | 16 | 8
const RECORD_SIZES: readonly number[] = [40, 16, 8]

/** One attendance record as the device stores it. */
export interface ZkAttendanceRecord {
  recordBytes: ZkRecordBytes
  /** The device's internal user index (40- and 8-byte records). */
  uid?: number
  /**
   * The user's PIN. An 8-byte record has none, only `uid`, which the device's user table maps to a
   * PIN.
   */
  userId?: string
  verify: number
  /** The punch state (check-in, check-out...). */
  state: number
  time: ZkWallTime
  /** 16-byte records carry a work code. */
  workcode?: number
}

/** A record whose bytes are not a record (a time that is no date, a PIN that is not text). */
export interface ZkMalformedRecord {
  index: number
  bytes: string
  error: string
}

export interface ZkAttendanceDataset {
  recordBytes: ZkRecordBytes | undefined
  records: ZkAttendanceRecord[]
  malformed: ZkMalformedRecord[]
}

const DATASET_SIZE_BYTES = 4
const PIN_BYTES = 24

/**
 * A CMD_ATTLOG_RRQ dataset whose records are decoded one at a time, when asked for: the raw log is
 * 40 bytes a record, its decoded objects several times that, and the agent runs in a small heap.
 */
export interface ZkAttendanceLog {
  recordBytes: ZkRecordBytes | undefined
  length: number
  /** The record at `index`, decoded anew on each call, or why its bytes are not a record. */
  at(index: number): { record: ZkAttendanceRecord } | { malformed: ZkMalformedRecord }
}

/**
 * Checks a CMD_ATTLOG_RRQ dataset: a u32le byte count, then the records. The record size is that
 * count divided by the record count of CMD_GET_FREE_SIZES (ZK protocol: the dataset does not say
 * it). Sizes that do not add up are an error for the whole dataset; a record that is the right size
 * but unreadable is reported as malformed by `at`, never dropped unseen.
 */
export function openZkAttendanceDataset(dataset: Buffer, recordCount: number): ZkAttendanceLog {
  if (!Number.isInteger(recordCount) || recordCount < 0) {
    throw new ZkProtocolError('zk_bad_dataset', `the record count must be a whole number, got ${recordCount}`)
  }
  if (dataset.length < DATASET_SIZE_BYTES) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `a dataset starts with a u32 size, got ${dataset.length} byte(s)`,
    )
  }
  const total = dataset.readUInt32LE(0)
  const body = dataset.subarray(DATASET_SIZE_BYTES)
  if (body.length !== total) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `the dataset says ${total} bytes of records but holds ${body.length}`,
    )
  }
  if (recordCount === 0) {
    if (total !== 0) {
      throw new ZkProtocolError(
        'zk_bad_dataset',
        `the device counts no record but sent ${total} bytes of them`,
      )
    }
    return { recordBytes: undefined, length: 0, at: (index) => outOfRange(index) }
  }
  const recordBytes = total / recordCount
  if (!RECORD_SIZES.includes(recordBytes)) {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `${total} bytes for ${recordCount} record(s) is no record size the protocol has (40, 16 or 8)`,
    )
  }
  const size = recordBytes as ZkRecordBytes
  return {
    recordBytes: size,
    length: recordCount,
    at(index) {
      if (!Number.isInteger(index) || index < 0 || index >= recordCount) return outOfRange(index)
      const bytes = body.subarray(index * size, (index + 1) * size)
      try {
        return { record: decodeZkRecord(bytes, size) }
      } catch (error) {
        if (!(error instanceof ZkProtocolError)) throw error
        return { malformed: { index, bytes: bytes.toString('hex'), error: error.message } }
      }
    },
  }
}

function outOfRange(index: number): never {
  throw new RangeError(`no record ${index} in the dataset`)
}

/** Every record of a CMD_ATTLOG_RRQ dataset, decoded at once (see openZkAttendanceDataset). */
export function decodeZkAttendanceDataset(dataset: Buffer, recordCount: number): ZkAttendanceDataset {
  const log = openZkAttendanceDataset(dataset, recordCount)
  const result: ZkAttendanceDataset = { recordBytes: log.recordBytes, records: [], malformed: [] }
  for (let index = 0; index < log.length; index++) {
    const entry = log.at(index)
    if ('record' in entry) result.records.push(entry.record)
    else result.malformed.push(entry.malformed)
  }
  return result
}

/** One record of a known size (ZK protocol record layouts, little-endian). */
export function decodeZkRecord(bytes: Buffer, size: ZkRecordBytes): ZkAttendanceRecord {
  if (bytes.length !== size) {
    throw new ZkProtocolError('zk_bad_dataset', `a ${size}-byte record has ${bytes.length} byte(s)`)
  }
  switch (size) {
    case 40:
      // u16 uid, 24-byte PIN, u8 verify @26, u32 time @27, u8 state @31, 8 reserved.
      return {
        recordBytes: 40,
        uid: bytes.readUInt16LE(0),
        userId: readPin(bytes.subarray(2, 2 + PIN_BYTES)),
        verify: bytes.readUInt8(26),
        time: decodeZkTime(bytes.readUInt32LE(27)),
        state: bytes.readUInt8(31),
      }
    case 16:
      // u32 PIN, u32 time, u8 verify, u8 state, 2 reserved, u32 work code.
      return {
        recordBytes: 16,
        userId: String(bytes.readUInt32LE(0)),
        time: decodeZkTime(bytes.readUInt32LE(4)),
        verify: bytes.readUInt8(8),
        state: bytes.readUInt8(9),
        workcode: bytes.readUInt32LE(12),
      }
    case 8:
      // u16 uid, u8 verify, u32 time, u8 state.
      return {
        recordBytes: 8,
        uid: bytes.readUInt16LE(0),
        verify: bytes.readUInt8(2),
        time: decodeZkTime(bytes.readUInt32LE(3)),
        state: bytes.readUInt8(7),
      }
  }
}

/**
 * A NUL-padded ASCII PIN (records and real-time events). Anything after the first NUL is padding;
 * a byte outside printable ASCII means the bytes are not a PIN.
 */
export function readPin(field: Buffer, code: ZkErrorCode = 'zk_bad_dataset'): string {
  const end = field.indexOf(0)
  const pin = field.subarray(0, end === -1 ? field.length : end)
  for (const byte of pin) {
    if (byte < 0x20 || byte > 0x7e) {
      throw new ZkProtocolError(code, `the PIN ${pin.toString('hex')} is not printable ASCII`)
    }
  }
  return pin.toString('latin1')
}
