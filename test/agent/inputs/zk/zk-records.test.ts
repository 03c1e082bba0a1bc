/**
 * Attendance datasets: the record size is total / record count (40, 16 or 8), the notes' 40-byte
 * example decodes, sizes that do not add up are an error for the whole dataset, and a record that
 * cannot be read is reported, never dropped unseen.
 */
import { describe, expect, it } from 'vitest'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'
import { decodeZkAttendanceDataset, decodeZkRecord, readPin } from '../../../../agent/inputs/zk/zk-records.js'

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex')

/** The zk-protocol 40-byte example: uid 0x000D, "999111333", verify 1, time 0x2368B36B, state 0. */
const EXAMPLE_40 = hex(
  '0d00 393939313131333333000000000000000000000000000000 01 6bb36823 00 0000000000000000',
)

function dataset(...records: Buffer[]): Buffer {
  const body = Buffer.concat(records)
  const size = Buffer.alloc(4)
  size.writeUInt32LE(body.length)
  return Buffer.concat([size, body])
}

function record16(pin: number, time: number, verify: number, state: number, workcode: number): Buffer {
  const r = Buffer.alloc(16)
  r.writeUInt32LE(pin, 0)
  r.writeUInt32LE(time, 4)
  r.writeUInt8(verify, 8)
  r.writeUInt8(state, 9)
  r.writeUInt32LE(workcode, 12)
  return r
}

function record8(uid: number, verify: number, time: number, state: number): Buffer {
  const r = Buffer.alloc(8)
  r.writeUInt16LE(uid, 0)
  r.writeUInt8(verify, 2)
  r.writeUInt32LE(time, 3)
  r.writeUInt8(state, 7)
  return r
}

const TIME = { year: 2018, month: 6, day: 25, hour: 17, minute: 50, second: 35 }

describe('decodeZkRecord', () => {
  it('reads the notes 40-byte example', () => {
    expect(EXAMPLE_40).toHaveLength(40)
    expect(decodeZkRecord(EXAMPLE_40, 40)).toEqual({
      recordBytes: 40,
      uid: 13,
      userId: '999111333',
      verify: 1,
      state: 0,
      time: TIME,
    })
  })

  it('reads 16- and 8-byte records', () => {
    expect(decodeZkRecord(record16(4822257, 0x2368b36b, 15, 1, 7), 16)).toEqual({
      recordBytes: 16,
      userId: '4822257',
      verify: 15,
      state: 1,
      time: TIME,
      workcode: 7,
    })
    expect(decodeZkRecord(record8(300, 1, 0x2368b36b, 4), 8)).toEqual({
      recordBytes: 8,
      uid: 300,
      verify: 1,
      state: 4,
      time: TIME,
    })
  })
})

describe('decodeZkAttendanceDataset', () => {
  it('chooses the record size from the total and the count', () => {
    const r40 = decodeZkAttendanceDataset(dataset(EXAMPLE_40, EXAMPLE_40), 2)
    expect(r40.recordBytes).toBe(40)
    expect(r40.records).toHaveLength(2)
    const r16 = decodeZkAttendanceDataset(dataset(record16(1, 0x2368b36b, 1, 0, 0)), 1)
    expect(r16.records.map((r) => r.userId)).toEqual(['1'])
    const r8 = decodeZkAttendanceDataset(
      dataset(record8(1, 1, 0x2368b36b, 0), record8(2, 1, 0x2368b36b, 1)),
      2,
    )
    expect(r8.records.map((r) => [r.uid, r.state])).toEqual([
      [1, 0],
      [2, 1],
    ])
  })

  it('is empty for no record', () => {
    expect(decodeZkAttendanceDataset(dataset(), 0)).toEqual({
      recordBytes: undefined,
      records: [],
      malformed: [],
    })
  })

  it('refuses a dataset whose sizes do not add up', () => {
    const cases: [Buffer, number][] = [
      // Total not a multiple of the count.
      [dataset(EXAMPLE_40), 3],
      // Quotient not 40, 16 or 8.
      [dataset(Buffer.alloc(24)), 1],
      // The u32 total disagrees with the bytes (cut short, or trailing bytes).
      [dataset(EXAMPLE_40).subarray(0, 30), 1],
      [Buffer.concat([dataset(EXAMPLE_40), Buffer.alloc(1)]), 1],
      // Records sent for a count of zero.
      [dataset(EXAMPLE_40), 0],
      // No size at all.
      [Buffer.alloc(3), 0],
    ]
    for (const [bytes, count] of cases) {
      expect(() => decodeZkAttendanceDataset(bytes, count), `${bytes.length} bytes, ${count}`).toThrow(
        ZkProtocolError,
      )
      expect(() => decodeZkAttendanceDataset(bytes, count)).toThrow(
        expect.objectContaining({ code: 'zk_bad_dataset' }),
      )
    }
    expect(() => decodeZkAttendanceDataset(dataset(), -1)).toThrow(
      expect.objectContaining({ code: 'zk_bad_dataset' }),
    )
  })

  it('reports an unreadable record with its bytes and keeps the others', () => {
    const badTime = record16(2, 0xffffffff, 1, 0, 0)
    const badPin = Buffer.from(EXAMPLE_40)
    badPin[3] = 0x07
    const read = decodeZkAttendanceDataset(dataset(record16(1, 0x2368b36b, 1, 0, 0), badTime), 2)
    expect(read.records.map((r) => r.userId)).toEqual(['1'])
    expect(read.malformed).toEqual([
      { index: 1, bytes: badTime.toString('hex'), error: expect.stringContaining('2099') },
    ])
    const pins = decodeZkAttendanceDataset(dataset(EXAMPLE_40, badPin), 2)
    expect(pins.records).toHaveLength(1)
    expect(pins.malformed.map((m) => m.index)).toEqual([1])
  })
})

describe('readPin', () => {
  it('reads up to the first NUL and refuses what is not printable ASCII', () => {
    expect(readPin(Buffer.from('12\0junk'))).toBe('12')
    expect(readPin(Buffer.from('full'))).toBe('full')
    expect(() => readPin(Buffer.from([0x31, 0xff]))).toThrow(
      expect.objectContaining({ code: 'zk_bad_dataset' }),
    )
    expect(() => readPin(Buffer.from([0x0a]), 'zk_bad_event')).toThrow(
      expect.objectContaining({ code: 'zk_bad_event' }),
    )
  })
})
