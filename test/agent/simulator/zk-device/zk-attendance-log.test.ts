import { describe, expect, it } from 'vitest'
import { ZkAttendanceLog } from '../../../../agent/simulator/zk-device/zk-attendance-log.js'
import { toWallTime } from '../../../../agent/simulator/zk-device/zk-time.js'

const punch = {
  uid: 13,
  userId: '999111333',
  time: toWallTime('2018-06-25T17:50:35'),
  verify: 1,
  state: 0,
  workcode: 0,
}

describe('ZkAttendanceLog', () => {
  it('writes the 40-byte record of the zk-protocol example byte for byte', () => {
    const log = new ZkAttendanceLog(40, 10)
    log.append(punch)
    expect(log.encoded().toString('hex')).toBe(
      '0d00393939313131333333000000000000000000000000000000016bb3682300' + '00000000ff000000',
    )
    expect(log.records()).toEqual([{ ...punch, time: '2018-06-25T17:50:35' }])
  })

  it('writes 16-byte records with a numeric user id and the workcode', () => {
    const log = new ZkAttendanceLog(16, 10)
    log.append({ ...punch, userId: '4822257', state: 4, workcode: 9 })
    expect(log.encoded().toString('hex')).toBe('f19449006bb3682301040000' + '09000000')
    expect(() => log.append({ ...punch, userId: 'E12' })).toThrow(RangeError)
  })

  it('writes 8-byte records with the uid, resolved to the user id when read', () => {
    const log = new ZkAttendanceLog(8, 10)
    log.append({ ...punch, state: 1 })
    expect(log.encoded().toString('hex')).toBe('0d00016bb3682301')
    expect(log.records((uid) => (uid === 13 ? '999111333' : undefined))[0]!.userId).toBe('999111333')
  })

  it('holds up to its capacity, grows cheaply and clears', () => {
    const log = new ZkAttendanceLog(40, 100_000)
    for (let i = 0; i < 100_000; i++) log.append(punch)
    expect(log.count).toBe(100_000)
    expect(log.encoded().length).toBe(4_000_000)
    expect(() => log.append(punch)).toThrow('full')
    log.clear()
    expect([log.count, log.free]).toEqual([0, 100_000])
  })
})
