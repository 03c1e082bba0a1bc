import { describe, expect, it } from 'vitest'
import {
  decodeZkTime,
  encodeEventTime,
  encodeZkTime,
  formatLocalTime,
  toWallTime,
} from '../../../../agent/simulator/zk-device/zk-time.js'
import { ZkWallClock } from '../../../../agent/simulator/zk-device/zk-wall-clock.js'

describe('ZK protocol time', () => {
  it('decodes the zk-protocol record example 0x2368B36B as 2018-06-25 17:50:35', () => {
    expect(formatLocalTime(decodeZkTime(0x2368b36b))).toBe('2018-06-25T17:50:35')
    expect(encodeZkTime(toWallTime('2018-06-25T17:50:35'))).toBe(0x2368b36b)
  })

  it('round-trips the first and last seconds of its range, and refuses years outside it', () => {
    for (const t of ['2000-01-01T00:00:00', '2099-12-31T23:59:59', '2024-02-29T12:00:00'])
      expect(formatLocalTime(decodeZkTime(encodeZkTime(toWallTime(t))))).toBe(t)
    expect(() => encodeZkTime(toWallTime('1999-12-31T23:59:59'))).toThrow(RangeError)
    expect(() => toWallTime('2026-02-30T00:00:00')).toThrow(RangeError)
    expect(() => toWallTime('2026-02-03 00:00:00')).toThrow(TypeError)
  })

  it('writes event times as YY MM DD hh mm ss', () => {
    expect(encodeEventTime(toWallTime('2018-12-07T19:09:06')).toString('hex')).toBe('120c07130906')
  })
})

describe('ZkWallClock', () => {
  it('runs with the host clock from where it was set, backwards included', () => {
    let host = 1_000_000
    const clock = new ZkWallClock(() => host, '2026-12-31T23:59:59')
    host += 1999
    expect(formatLocalTime(clock.now())).toBe('2027-01-01T00:00:00')
    clock.set({ year: 2026, month: 1, day: 1, hour: 0, minute: 0, second: 0 })
    host += 61_000
    expect(formatLocalTime(clock.now())).toBe('2026-01-01T00:01:01')
  })

  it('starts at the host UTC wall time when not set', () => {
    const clock = new ZkWallClock(() => Date.parse('2026-11-26T16:00:00.900Z'))
    expect(formatLocalTime(clock.now())).toBe('2026-11-26T16:00:00')
  })
})
