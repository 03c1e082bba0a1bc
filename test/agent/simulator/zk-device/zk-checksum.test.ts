import { describe, expect, it } from 'vitest'
import { zkChecksum } from '../../../../agent/simulator/zk-device/zk-checksum.js'
import { decodeZkPayload, encodeZkPayload } from '../../../../agent/simulator/zk-device/zk-packet.js'

const bytes = (hex: string) => Buffer.from(hex.replace(/ /g, ''), 'hex')

describe('zkChecksum (RFC 1071 over LE words)', () => {
  it('matches the zk-protocol test vectors, whatever the checksum field holds', () => {
    expect(zkChecksum(bytes('0b00 5a17 f38d 0300 5a4b4661636556657273696f6e00'))).toBe(0x175a)
    expect(zkChecksum(bytes('0b00 0000 f38d 0300 5a4b4661636556657273696f6e00'))).toBe(0x175a)
    expect(zkChecksum(bytes('d007 296a f38d 0a00 09'))).toBe(0x6a29)
  })

  it('builds the published pyzk packets byte for byte', () => {
    const packet = (cmd: number, session: number, reply: number, data = '') =>
      encodeZkPayload({ cmd, session, reply, data: bytes(data) }).toString('hex')
    expect(packet(1000, 0, 0)).toBe('e80317fc00000000')
    expect(packet(2000, 0xfb2f, 0)).toBe('d007fffc2ffb0000')
    expect(packet(1102, 0x45cf, 1, '61c9323c')).toBe('4e044db0cf45010061c9323c')
    expect(packet(1001, 0xfb2f, 1)).toBe('e903e6002ffb0100')
  })

  it('refuses a payload whose checksum does not add up', () => {
    expect(decodeZkPayload(bytes('e80317fc00000000'))).toMatchObject({ cmd: 1000, session: 0, reply: 0 })
    expect(decodeZkPayload(bytes('e80318fc00000000'))).toBe('bad checksum')
    expect(decodeZkPayload(bytes('e803'))).toMatch(/no header/)
  })
})
