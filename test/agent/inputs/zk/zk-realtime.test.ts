/** EF_ATTLOG event payloads of every size the notes list (10/12/14, 32/36/37/52), and their vectors. */
import { describe, expect, it } from 'vitest'
import { decodeZkAttlogEvent, ZK_ATTLOG_EVENT_SIZES } from '../../../../agent/inputs/zk/zk-realtime.js'

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex')
const textPin = (pin: string) => Buffer.from(pin, 'latin1').toString('hex').padEnd(48, '0')
const TIME = '120619112905'
const AT = { year: 2018, month: 6, day: 25, hour: 17, minute: 41, second: 5 }

describe('decodeZkAttlogEvent', () => {
  it('reads the notes vectors', () => {
    expect(decodeZkAttlogEvent(hex('f1944900 00 00 120c07130906'))).toEqual({
      userId: '4822257',
      verify: 0,
      state: 0,
      time: { year: 2018, month: 12, day: 7, hour: 19, minute: 9, second: 6 },
    })
    expect(decodeZkAttlogEvent(hex(`${textPin('1140064')} 0f 00 120b1d0c3703`))).toEqual({
      userId: '1140064',
      verify: 15,
      state: 0,
      time: { year: 2018, month: 11, day: 29, hour: 12, minute: 55, second: 3 },
    })
    // zk-protocol's captured event: "999111333", fingerprint.
    expect(decodeZkAttlogEvent(hex(`${textPin('999111333')} 01 00 ${TIME}`))).toEqual({
      userId: '999111333',
      verify: 1,
      state: 0,
      time: AT,
    })
  })

  it.each([
    [10, `3930 04 01 ${TIME}`, '12345'],
    [12, `39300000 04 01 ${TIME}`, '12345'],
    [14, `3930 04 01 ${TIME} ffffffff`, '12345'],
    [32, `${textPin('E-77')} 04 01 ${TIME}`, 'E-77'],
    [36, `${textPin('E-77')} 04 01 ${TIME} ${'ff'.repeat(4)}`, 'E-77'],
    [37, `${textPin('E-77')} 04 01 ${TIME} ${'ff'.repeat(5)}`, 'E-77'],
    [52, `${textPin('E-77')} 04 01 ${TIME} ${'ff'.repeat(20)}`, 'E-77'],
  ])('reads a %i-byte payload', (size, bytes, userId) => {
    const data = hex(bytes)
    expect(data).toHaveLength(size)
    expect(decodeZkAttlogEvent(data)).toEqual({ userId, verify: 4, state: 1, time: AT })
  })

  it('lists every size it reads', () => {
    expect([...ZK_ATTLOG_EVENT_SIZES].sort((a, b) => a - b)).toEqual([10, 12, 14, 32, 36, 37, 52])
  })

  it('refuses other sizes, a time that is no time, and a PIN that is not one', () => {
    for (const bytes of [
      '',
      `3930 04 01 ${TIME} 00`,
      `39300000 04 01 120d01000000`,
      `${'00'.repeat(24)} 04 01 ${TIME}`,
      `${'0a'.repeat(24)} 04 01 ${TIME}`,
    ]) {
      expect(() => decodeZkAttlogEvent(hex(bytes)), bytes).toThrow(
        expect.objectContaining({ code: 'zk_bad_event' }),
      )
    }
  })
})
