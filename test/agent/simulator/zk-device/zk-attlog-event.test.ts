import { describe, expect, it } from 'vitest'
import { defaultEventSize, encodeAttlogEvent } from '../../../../agent/simulator/zk-device/zk-attlog-event.js'
import { toWallTime } from '../../../../agent/simulator/zk-device/zk-time.js'

describe('encodeAttlogEvent', () => {
  it('gives the pyzk test.py events', () => {
    const base = { uid: 5, workcode: 0, verify: 0, state: 0 }
    const twelve = encodeAttlogEvent(
      { ...base, userId: '4822257', time: toWallTime('2018-12-07T19:09:06') },
      12,
    )
    expect(twelve.toString('hex')).toBe('f1944900' + '0000' + '120c07130906')
    const text = encodeAttlogEvent(
      { ...base, userId: '1140064', verify: 15, time: toWallTime('2018-11-29T12:55:03') },
      32,
    )
    expect(text.subarray(0, 24).toString('ascii')).toBe('1140064'.padEnd(24, '\0'))
    expect(text.subarray(24).toString('hex')).toBe('0f00120b1d0c3703')
  })

  it('pads the longer forms, and picks the form of each record size', () => {
    const event = encodeAttlogEvent(
      { uid: 5, userId: '7', time: toWallTime('2026-01-02T03:04:05'), verify: 1, state: 2, workcode: 0 },
      52,
    )
    expect(event.length).toBe(52)
    expect(event.subarray(24, 32).toString('hex')).toBe('01021a0102030405')
    expect([defaultEventSize(40), defaultEventSize(16), defaultEventSize(8)]).toEqual([32, 12, 10])
  })
})
