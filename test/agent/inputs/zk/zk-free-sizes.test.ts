/** CMD_GET_FREE_SIZES: a u32 array, records at word 8 (the notes; pyzk's captured reply). */
import { describe, expect, it } from 'vitest'
import { decodeZkFreeSizes } from '../../../../agent/inputs/zk/zk-free-sizes.js'
import { decodeZkPacket } from '../../../../agent/inputs/zk/zk-packet.js'
import { ZkProtocolError } from '../../../../agent/inputs/zk/zk-protocol-error.js'

// A device's reply as captured in pyzk test.py (the payload after the TCP prefix).
const CAPTURED =
  'd007a3159663130000000000000000000000000000000000070000000000000006000000000000005d020000000000000f0c0000000000000100000000000000b80b000010270000a0860100b20b00000927000043840100000000000000'

describe('decodeZkFreeSizes', () => {
  it('reads the counts and capacities of a captured reply', () => {
    const packet = decodeZkPacket(Buffer.from(CAPTURED, 'hex'))
    expect(decodeZkFreeSizes(packet.data)).toEqual({
      users: 7,
      fingers: 6,
      records: 605,
      cards: 1,
      fingerCapacity: 3000,
      userCapacity: 10000,
      recordCapacity: 100000,
      fingersAvailable: 2994,
      usersAvailable: 9993,
      recordsAvailable: 99395,
    })
  })

  it('adds face counts when the device sends 92 bytes', () => {
    const data = Buffer.alloc(92)
    data.writeUInt32LE(12, 80)
    data.writeUInt32LE(400, 88)
    expect(decodeZkFreeSizes(data)).toMatchObject({ faces: 12, faceCapacity: 400 })
  })

  it('refuses a reply shorter than the 80 bytes every device sends', () => {
    expect(() => decodeZkFreeSizes(Buffer.alloc(79))).toThrow(ZkProtocolError)
    expect(() => decodeZkFreeSizes(Buffer.alloc(79))).toThrow(
      expect.objectContaining({ code: 'zk_unexpected_reply' }),
    )
  })
})
