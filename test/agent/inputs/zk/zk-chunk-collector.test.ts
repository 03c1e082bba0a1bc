/**
 * One chunk of a bulk read from the packets that answer CMD_DATA_RDY: PREPARE_DATA + DATA + ACK_OK
 * (TCP), PREPARE_DATA + several DATA + ACK_OK (UDP), or DATA alone; never more or fewer bytes.
 */
import { describe, expect, it } from 'vitest'
import { ZkChunkCollector } from '../../../../agent/inputs/zk/zk-chunk-collector.js'
import type { ZkPacket } from '../../../../agent/inputs/zk/zk-packet.js'

const p = (command: number, data: Buffer | string = ''): ZkPacket => ({
  command,
  sessionId: 1,
  replyNumber: 9,
  data: typeof data === 'string' ? Buffer.from(data, 'hex') : data,
})
const prepare = (size: number) => {
  const data = Buffer.alloc(8)
  data.writeUInt32LE(size, 0)
  data.writeUInt32LE(0x10, 4)
  return p(1500, data)
}
const DATA = 1501
const ACK_OK = 2000

function feed(collector: ZkChunkCollector, packets: ZkPacket[]): (Buffer | undefined)[] {
  return packets.map((packet) => collector.accept(packet))
}

describe('ZkChunkCollector', () => {
  it('takes PREPARE_DATA, DATA, ACK_OK (TCP)', () => {
    const bytes = Buffer.alloc(10, 7)
    expect(feed(new ZkChunkCollector(0, 10), [prepare(10), p(DATA, bytes), p(ACK_OK)])).toEqual([
      undefined,
      undefined,
      bytes,
    ])
  })

  it('takes the bytes over several DATA packets (UDP)', () => {
    const out = feed(new ZkChunkCollector(0, 6), [
      prepare(6),
      p(DATA, '0102'),
      p(DATA, '030405'),
      p(DATA, '06'),
      p(ACK_OK),
    ])
    expect(out.at(-1)?.toString('hex')).toBe('010203040506')
    expect(out.slice(0, -1)).toEqual([undefined, undefined, undefined, undefined])
  })

  it('takes DATA alone once the chunk is whole', () => {
    expect(
      feed(new ZkChunkCollector(0, 3), [p(DATA, '01'), p(DATA, '0203')]).map((b) => b?.toString('hex')),
    ).toEqual([undefined, '010203'])
  })

  it('refuses a chunk of another size, too many bytes, or an early end', () => {
    expect(() => new ZkChunkCollector(0, 10).accept(prepare(11))).toThrow(
      expect.objectContaining({ code: 'zk_bad_dataset' }),
    )
    const over = new ZkChunkCollector(0, 2)
    over.accept(prepare(2))
    expect(() => over.accept(p(DATA, '010203'))).toThrow(expect.objectContaining({ code: 'zk_bad_dataset' }))
    const short = new ZkChunkCollector(0, 2)
    short.accept(prepare(2))
    short.accept(p(DATA, '01'))
    expect(() => short.accept(p(ACK_OK))).toThrow(expect.objectContaining({ code: 'zk_bad_dataset' }))
  })

  it('refuses packets out of place, and reports a refusal', () => {
    expect(() => new ZkChunkCollector(0, 2).accept(p(ACK_OK))).toThrow(
      expect.objectContaining({ code: 'zk_unexpected_reply' }),
    )
    const twice = new ZkChunkCollector(0, 2)
    twice.accept(prepare(2))
    expect(() => twice.accept(prepare(2))).toThrow(expect.objectContaining({ code: 'zk_unexpected_reply' }))
    expect(() => new ZkChunkCollector(0, 2).accept(p(2001))).toThrow(
      expect.objectContaining({ code: 'zk_command_failed', replyCode: 2001 }),
    )
  })
})
