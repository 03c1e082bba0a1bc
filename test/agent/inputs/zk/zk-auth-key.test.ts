/** MakeKey for CMD_AUTH: the notes' vectors (pyzk test.py) and the packet that carries it. */
import { describe, expect, it } from 'vitest'
import { makeZkAuthKey } from '../../../../agent/inputs/zk/zk-auth-key.js'
import { encodeZkPacket } from '../../../../agent/inputs/zk/zk-packet.js'

describe('makeZkAuthKey', () => {
  it('gives the published keys for session 0x45cf with ticks 50', () => {
    expect(makeZkAuthKey(45, 0x45cf).toString('hex')).toBe('61c9323c')
    expect(makeZkAuthKey(12, 0x45cf).toString('hex')).toBe('614d323c')
  })

  it('goes into the published CMD_AUTH packet', () => {
    const packet = encodeZkPacket({
      command: 1102,
      sessionId: 0x45cf,
      replyNumber: 1,
      data: makeZkAuthKey(45, 0x45cf),
    })
    expect(packet.toString('hex')).toBe('4e044db0cf45010061c9323c')
  })

  it('puts the ticks in byte 2 whatever the key', () => {
    expect(makeZkAuthKey(0, 1, 0x77)[2]).toBe(0x77)
    expect(makeZkAuthKey(0xffffffff, 0xffff)[2]).toBe(50)
  })

  it('refuses a key that is not a u32', () => {
    expect(() => makeZkAuthKey(-1, 1)).toThrow(RangeError)
    expect(() => makeZkAuthKey(2 ** 32, 1)).toThrow(RangeError)
    expect(() => makeZkAuthKey(1.5, 1)).toThrow(RangeError)
  })
})
