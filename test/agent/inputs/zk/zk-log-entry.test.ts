import { describe, expect, it } from 'vitest'
import { parseZkAttlog } from '../../../../agent/formats/zk-attlog.js'
import { realtimeEntry, ZkLogView } from '../../../../agent/inputs/zk/zk-log-entry.js'
import type {
  ZkAttendanceLog,
  ZkAttendanceRecord,
  ZkMalformedRecord,
} from '../../../../agent/inputs/zk/zk-records.js'

/** A log of these records and unreadable ones, in their places. */
function logOf(records: ZkAttendanceRecord[], malformed: ZkMalformedRecord[] = []): ZkAttendanceLog {
  const places: ({ record: ZkAttendanceRecord } | { malformed: ZkMalformedRecord })[] = records.map(
    (record) => ({
      record,
    }),
  )
  for (const m of malformed) places.splice(m.index, 0, { malformed: m })
  return {
    recordBytes: records[0]?.recordBytes,
    length: places.length,
    at: (i) => {
      const place = places[i]
      if (!place) throw new RangeError(`no record ${i}`)
      return place
    },
  }
}

const time = { year: 2026, month: 11, day: 26, hour: 9, minute: 5, second: 7 }

describe('ZkLogView', () => {
  it('writes each record as the ATTLOG line a push terminal would upload, which the intake reads back', () => {
    const records: ZkAttendanceRecord[] = [
      { recordBytes: 40, uid: 3, userId: 'E0042', verify: 1, state: 1, time },
      { recordBytes: 16, userId: '4822257', verify: 15, state: 4, time, workcode: 9 },
    ]
    const view = new ZkLogView(logOf(records))
    expect(view.length).toBe(2)
    expect(view.entry(0)).toEqual({
      key: 'E0042\t2026-11-26T09:05:07\t1',
      time: '2026-11-26T09:05:07',
      line: 'E0042\t2026-11-26 09:05:07\t1\t1\t0',
    })
    const line = view.entry(1).line ?? ''
    expect(line).toBe('4822257\t2026-11-26 09:05:07\t4\t15\t9')
    expect(parseZkAttlog(line).punches).toEqual([
      { employeeCode: '4822257', punchedAt: '2026-11-26 09:05:07', status: '4' },
    ])
  })

  it("names an 8-byte record's user through the user table, and dead-letters one no user has", () => {
    const records: ZkAttendanceRecord[] = [
      { recordBytes: 8, uid: 7, verify: 1, state: 0, time },
      { recordBytes: 8, uid: 9, verify: 1, state: 0, time },
    ]
    const view = new ZkLogView(logOf(records), new Map([[7, '4822257']]))
    expect(view.entry(0).line).toBe('4822257\t2026-11-26 09:05:07\t0\t1\t0')
    expect(view.entry(1).line).toBeUndefined()
    expect(view.entry(1)).toMatchObject({ raw: 'uid 9\t2026-11-26 09:05:07\t0\t1' })
    expect(view.entry(1).key).not.toBe(view.entry(0).key)
  })

  it('keeps an unreadable record in its place in the log', () => {
    const records: ZkAttendanceRecord[] = [
      { recordBytes: 40, uid: 1, userId: '1', verify: 1, state: 0, time },
      { recordBytes: 40, uid: 2, userId: '2', verify: 1, state: 0, time },
    ]
    const view = new ZkLogView(logOf(records, [{ index: 1, bytes: 'ff00', error: 'no date' }]))
    expect(view.length).toBe(3)
    expect(view.key(0)).toBe('1\t2026-11-26T09:05:07\t0')
    expect(view.entry(1)).toEqual({ key: 'bytes:ff00', raw: 'ff00', problem: 'no date' })
    expect(view.key(2)).toBe('2\t2026-11-26T09:05:07\t0')
  })
})

describe('realtimeEntry', () => {
  it('has the key of the record the read will find, so that the punch is handed on once', () => {
    const event = realtimeEntry({ userId: 'E0042', verify: 1, state: 1, time })
    const record = new ZkLogView(
      logOf([{ recordBytes: 40, uid: 3, userId: 'E0042', verify: 1, state: 1, time }]),
    )
    expect(event?.key).toBe(record.key(0))
    expect(event?.line).toBe(record.entry(0).line)
  })

  it("maps an 8-byte device's user number, and gives nothing for one the table lacks", () => {
    const users = new Map([[7, '4822257']])
    expect(realtimeEntry({ userId: '7', verify: 1, state: 0, time }, users)?.line).toMatch(/^4822257\t/)
    expect(realtimeEntry({ userId: '8', verify: 1, state: 0, time }, users)).toBeUndefined()
  })
})
