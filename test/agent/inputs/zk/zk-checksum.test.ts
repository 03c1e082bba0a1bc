/** The packet checksum is RFC 1071 over little-endian words; the notes' published vectors. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { zkChecksum } from '../../../../agent/inputs/zk/zk-checksum.js'

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex')

describe('zkChecksum', () => {
  it('gives the published values (zk-protocol test vectors, checksum field zeroed)', () => {
    expect(zkChecksum(hex('0b00 0000 f38d 0300 5a4b4661636556657273696f6e00'))).toBe(0x175a)
    // Odd length: the last byte is padded with zero.
    expect(zkChecksum(hex('d007 0000 f38d 0a00 09'))).toBe(0x6a29)
  })

  it('skips the checksum field when told its offset', () => {
    expect(zkChecksum(hex('0b00 5a17 f38d 0300 5a4b4661636556657273696f6e00'), 2)).toBe(0x175a)
    expect(zkChecksum(hex('d007 296a f38d 0a00 09'), 2)).toBe(0x6a29)
  })

  it('makes the sum of all words, checksum included, 0xFFFF (RFC 1071 §1, verification)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 4, maxLength: 300 }), (bytes) => {
        const payload = Buffer.from(bytes)
        payload.writeUInt16LE(0, 2)
        payload.writeUInt16LE(zkChecksum(payload), 2)
        let sum = 0
        for (let i = 0; i < payload.length; i += 2) sum += (payload[i] ?? 0) + 256 * (payload[i + 1] ?? 0)
        while (sum > 0xffff) sum = (sum & 0xffff) + Math.floor(sum / 0x10000)
        // Ones'-complement zero has two forms; a sum of zero words is the only way to get 0x0000.
        expect(sum === 0xffff || (sum === 0 && payload.every((b) => b === 0))).toBe(true)
      }),
    )
  })
})
