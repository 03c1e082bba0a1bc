/** Device times both ways: the packed u32 and the 6-byte real-time form, 2000–2099, validated. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  decodeZkRealtimeTime,
  decodeZkTime,
  encodeZkRealtimeTime,
  encodeZkTime,
  formatZkWallTime,
  type ZkWallTime,
} from '../../../../agent/inputs/zk/zk-time.js'

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0

const wallTime: fc.Arbitrary<ZkWallTime> = fc
  .record({
    year: fc.integer({ min: 2000, max: 2099 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
  })
  .map((t) => ({
    ...t,
    day: Math.min(t.day, t.month === 2 && leap(t.year) ? 29 : (DAYS[t.month - 1] ?? 31)),
  }))

const at = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0): ZkWallTime => ({
  year,
  month,
  day,
  hour,
  minute,
  second,
})

describe('packed ZK time', () => {
  it('decodes the notes example: 0x2368B36B is 2018-06-25 17:50:35', () => {
    expect(decodeZkTime(0x2368b36b)).toEqual(at(2018, 6, 25, 17, 50, 35))
    expect(encodeZkTime(at(2018, 6, 25, 17, 50, 35))).toBe(0x2368b36b)
  })

  it('counts every month as 31 days', () => {
    expect(encodeZkTime(at(2000, 1, 1))).toBe(0)
    expect(encodeZkTime(at(2000, 2, 1))).toBe(31 * 86400)
    expect(encodeZkTime(at(2001, 1, 1))).toBe(12 * 31 * 86400)
    expect(encodeZkTime(at(2099, 12, 31, 23, 59, 59))).toBe(100 * 12 * 31 * 86400 - 1)
  })

  it('round-trips every valid time', () => {
    fc.assert(
      fc.property(wallTime, (t) => {
        expect(decodeZkTime(encodeZkTime(t))).toEqual(t)
      }),
    )
  })

  it('round-trips every u32 that decodes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (value) => {
        let t: ZkWallTime
        try {
          t = decodeZkTime(value)
        } catch (error) {
          expect(error).toMatchObject({ code: 'zk_bad_time' })
          return
        }
        expect(encodeZkTime(t)).toBe(value)
      }),
    )
  })

  it('refuses a packed value that is no date, or after 2099', () => {
    // 30 February 2019: day index 29 of month index 1.
    expect(() => decodeZkTime((19 * 12 * 31 + 31 + 29) * 86400)).toThrow(
      expect.objectContaining({ code: 'zk_bad_time' }),
    )
    expect(() => decodeZkTime(100 * 12 * 31 * 86400)).toThrow(
      expect.objectContaining({ code: 'zk_bad_time' }),
    )
    expect(() => decodeZkTime(-1)).toThrow(expect.objectContaining({ code: 'zk_bad_time' }))
  })

  it('refuses to encode a time the device cannot hold', () => {
    for (const t of [
      at(1999, 12, 31),
      at(2100, 1, 1),
      at(2023, 2, 29),
      at(2024, 4, 31),
      at(2024, 1, 1, 24),
      at(2024, 1, 1, 0, 0, 60),
    ]) {
      expect(() => encodeZkTime(t), formatZkWallTime(t)).toThrow(
        expect.objectContaining({ code: 'zk_bad_time' }),
      )
    }
    expect(encodeZkTime(at(2024, 2, 29))).toBe((24 * 12 * 31 + 31 + 28) * 86400)
  })
})

describe('real-time ZK time', () => {
  it('decodes the notes vectors', () => {
    expect(decodeZkRealtimeTime(Buffer.from('120c07130906', 'hex'))).toEqual(at(2018, 12, 7, 19, 9, 6))
    expect(decodeZkRealtimeTime(Buffer.from('120b1d0c3703', 'hex'))).toEqual(at(2018, 11, 29, 12, 55, 3))
    expect(decodeZkRealtimeTime(Buffer.from('120619112905', 'hex'))).toEqual(at(2018, 6, 25, 17, 41, 5))
  })

  it('round-trips every valid time', () => {
    fc.assert(
      fc.property(wallTime, (t) => {
        expect(decodeZkRealtimeTime(encodeZkRealtimeTime(t))).toEqual(t)
      }),
    )
  })

  it('refuses bytes that are no time', () => {
    for (const bytes of ['120d01000000', '120230000000', '120101180000', '640101000000', '1201010000']) {
      expect(() => decodeZkRealtimeTime(Buffer.from(bytes, 'hex')), bytes).toThrow(
        expect.objectContaining({ code: 'zk_bad_time' }),
      )
    }
  })
})

describe('formatZkWallTime', () => {
  it('is the local ISO form, without a zone', () => {
    expect(formatZkWallTime(at(2018, 6, 5, 7, 0, 9))).toBe('2018-06-05T07:00:09')
  })
})
