/**
 * Packets and TCP framing: the notes' captured packets encode and decode byte for byte, a corrupt
 * one is refused, and the reassembler gives the same payloads however TCP splits or merges them.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  decodeZkPacket,
  encodeZkPacket,
  frameZkTcp,
  type ZkPacket,
  ZkTcpReassembler,
} from '../../../../agent/inputs/zk/zk-packet.js'

const hex = (s: string) => Buffer.from(s.replace(/ /g, ''), 'hex')
const packet = (command: number, sessionId: number, replyNumber: number, data = ''): ZkPacket => ({
  command,
  sessionId,
  replyNumber,
  data: hex(data),
})

describe('encodeZkPacket / decodeZkPacket', () => {
  const vectors: [string, ZkPacket][] = [
    // pyzk: CMD_CONNECT, and a device's CMD_ACK_OK.
    ['e803 17fc 0000 0000', packet(1000, 0, 0)],
    ['d007 fffc 2ffb 0000', packet(2000, 0xfb2f, 0)],
    // pyzk: CMD_AUTH with MakeKey(45, 0x45cf).
    ['4e04 4db0 cf45 0100 61c9323c', packet(1102, 0x45cf, 1, '61c9323c')],
    // zk-protocol: the two checksum vectors with their checksums in place.
    [
      '0b00 5a17 f38d 0300 5a4b4661636556657273696f6e00',
      packet(11, 0x8df3, 3, '5a4b4661636556657273696f6e00'),
    ],
    ['d007 296a f38d 0a00 09', packet(2000, 0x8df3, 10, '09')],
    // zk-protocol: "~Platform" asked and answered.
    ['0b00 b9e6 f38d 0c00 7e506c6174666f726d00', packet(11, 0x8df3, 12, '7e506c6174666f726d00')],
    // Real-time events: EF_ATTLOG in the session field, reply 0 (pyzk; zk-protocol).
    ['f401 ae43 0100 0000 f19449000000120c07130906', packet(500, 1, 0, 'f19449000000120c07130906')],
    [
      'f401 ac12 0100 0000 393939313131333333000000000000000000000000000000 0100 120619112905',
      packet(
        500,
        1,
        0,
        '393939313131333333000000000000000000000000000000 0100 120619112905'.replace(/ /g, ''),
      ),
    ],
  ]

  it.each(vectors)('%s', (bytes, expected) => {
    expect(encodeZkPacket(expected).toString('hex')).toBe(hex(bytes).toString('hex'))
    expect(decodeZkPacket(hex(bytes))).toEqual(expected)
  })

  it('frames the notes connect packet for TCP', () => {
    expect(frameZkTcp(encodeZkPacket(packet(1000, 0, 0))).toString('hex')).toBe(
      '5050827d08000000e80317fc00000000',
    )
  })

  it('refuses a wrong checksum and a short packet', () => {
    expect(() => decodeZkPacket(hex('e803 17fd 0000 0000'))).toThrow(
      expect.objectContaining({ code: 'zk_bad_checksum' }),
    )
    expect(() => decodeZkPacket(hex('e803 17fc 0000'))).toThrow(
      expect.objectContaining({ code: 'zk_packet_too_short' }),
    )
  })

  it('round-trips any packet, and any flipped bit is caught', () => {
    fc.assert(
      fc.property(
        fc.record({
          command: fc.integer({ min: 0, max: 0xffff }),
          sessionId: fc.integer({ min: 0, max: 0xffff }),
          replyNumber: fc.integer({ min: 0, max: 0xffff }),
          data: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
        }),
        fc.nat(),
        (p, flip) => {
          const bytes = encodeZkPacket(p)
          expect(decodeZkPacket(bytes)).toEqual(p)
          const corrupt = Buffer.from(bytes)
          const bit = flip % (corrupt.length * 8)
          corrupt[bit >> 3] = (corrupt[bit >> 3] ?? 0) ^ (1 << (bit & 7))
          expect(() => decodeZkPacket(corrupt)).toThrow()
        },
      ),
    )
  })
})

/** Cuts `bytes` at the given offsets. */
function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const parts: Buffer[] = []
  let last = 0
  for (const p of [...points, bytes.length]) {
    parts.push(bytes.subarray(last, p))
    last = p
  }
  return parts
}

describe('ZkTcpReassembler', () => {
  const payloadArb = fc.uint8Array({ minLength: 8, maxLength: 200 }).map((a) => Buffer.from(a))

  it('gives the same payloads however the stream is split or merged', () => {
    fc.assert(
      fc.property(
        fc.array(payloadArb, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        (payloads, cuts) => {
          const stream = Buffer.concat(payloads.map(frameZkTcp))
          const reassembler = new ZkTcpReassembler()
          const out: Buffer[] = []
          for (const chunk of splitAt(stream, cuts)) {
            const result = reassembler.push(chunk)
            expect(result.error).toBeUndefined()
            out.push(...result.payloads)
          }
          expect(out).toEqual(payloads)
          expect(reassembler.bufferedBytes).toBe(0)
        },
      ),
    )
  })

  it('gives the frames before a wrong magic, then the error, whatever the split', () => {
    fc.assert(
      fc.property(
        fc.array(payloadArb, { maxLength: 4 }),
        fc.uint8Array({ minLength: 1, maxLength: 12 }).filter((a) => a[0] !== 0x50),
        fc.array(fc.nat(), { maxLength: 10 }),
        (payloads, garbage, cuts) => {
          const stream = Buffer.concat([...payloads.map(frameZkTcp), Buffer.from(garbage)])
          const reassembler = new ZkTcpReassembler()
          const out: Buffer[] = []
          let error: unknown
          for (const chunk of splitAt(stream, cuts)) {
            const result = reassembler.push(chunk)
            out.push(...result.payloads)
            error ??= result.error
          }
          expect(out).toEqual(payloads)
          expect(error).toMatchObject({ code: 'zk_bad_magic' })
          // The stream stays stopped.
          expect(reassembler.push(frameZkTcp(Buffer.alloc(8)))).toEqual({ payloads: [], error })
        },
      ),
    )
  })

  it('refuses a frame longer than the bound from its prefix alone', () => {
    const reassembler = new ZkTcpReassembler({ maxPacketBytes: 1024 })
    const prefix = hex('5050827d 01040000')
    expect(reassembler.push(prefix).error).toMatchObject({ code: 'zk_packet_too_large' })
    expect(
      new ZkTcpReassembler({ maxPacketBytes: 1024 }).push(frameZkTcp(Buffer.alloc(1024))).payloads,
    ).toHaveLength(1)
  })

  it('sees a wrong magic from its first byte', () => {
    expect(new ZkTcpReassembler().push(hex('50 51')).error).toMatchObject({ code: 'zk_bad_magic' })
    expect(new ZkTcpReassembler().push(hex('50 50 82')).error).toBeUndefined()
  })

  it('counts the bytes of an unfinished frame', () => {
    const reassembler = new ZkTcpReassembler()
    reassembler.push(frameZkTcp(Buffer.alloc(20)).subarray(0, 13))
    expect(reassembler.bufferedBytes).toBe(13)
  })
})
