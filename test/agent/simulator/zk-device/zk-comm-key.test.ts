import { describe, expect, it } from 'vitest'
import { isCommKey, makeCommKey } from '../../../../agent/simulator/zk-device/zk-comm-key.js'

describe('makeCommKey (ZK SDK MakeKey)', () => {
  it('gives the pyzk test.py vectors', () => {
    expect(makeCommKey(45, 0x45cf).toString('hex')).toBe('61c9323c')
    expect(makeCommKey(12, 0x45cf).toString('hex')).toBe('614d323c')
  })

  it('recognises the key whatever ticks the client chose, and nothing else', () => {
    expect(isCommKey(makeCommKey(999_999, 0x1234, 7), 999_999, 0x1234)).toBe(true)
    expect(isCommKey(makeCommKey(999_999, 0x1234, 7), 999_998, 0x1234)).toBe(false)
    // Byte 2 carries the ticks in place of the sum's low byte: only the session's high byte counts.
    expect(isCommKey(makeCommKey(999_999, 0x1234, 7), 999_999, 0x1334)).toBe(false)
    expect(isCommKey(Buffer.from([1, 2]), 999_999, 0x1234)).toBe(false)
  })
})
