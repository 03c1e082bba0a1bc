import { zkChecksum } from './zk-checksum.js'
import { ZkProtocolError } from './zk-protocol-error.js'

/**
 * One ZK protocol packet: an 8-byte little-endian header (cmd u16, checksum u16, session u16,
 * reply u16) then data. Over UDP a datagram is one payload; over TCP each payload is framed.
 */
export interface ZkPacket {
  command: number
  sessionId: number
  /** The client's request counter, echoed by the device; 0 in a real-time event. */
  replyNumber: number
  data: Buffer
}

export const ZK_HEADER_BYTES = 8
const CHECKSUM_OFFSET = 2

/** ZK protocol TCP frame start: `50 50 82 7D`, then the payload length as u32le. */
export const ZK_TCP_MAGIC = Buffer.from([0x50, 0x50, 0x82, 0x7d])
export const ZK_TCP_PREFIX_BYTES = 8

/**
 * Largest payload kept by default: the client asks for bulk-read chunks of at most 0xFFC0 bytes over
 * TCP, so 128 KiB leaves room for a device that sends a little more in one CMD_DATA.
 */
export const DEFAULT_MAX_PACKET_BYTES = 128 * 1024

/** The payload bytes of a packet, its checksum computed. */
export function encodeZkPacket(packet: ZkPacket): Buffer {
  const payload = Buffer.alloc(ZK_HEADER_BYTES + packet.data.length)
  payload.writeUInt16LE(packet.command & 0xffff, 0)
  payload.writeUInt16LE(packet.sessionId & 0xffff, 4)
  payload.writeUInt16LE(packet.replyNumber & 0xffff, 6)
  packet.data.copy(payload, ZK_HEADER_BYTES)
  payload.writeUInt16LE(zkChecksum(payload, CHECKSUM_OFFSET), CHECKSUM_OFFSET)
  return payload
}

/** Reads a payload; a short payload or a wrong checksum is an error, never a packet. */
export function decodeZkPacket(payload: Buffer): ZkPacket {
  if (payload.length < ZK_HEADER_BYTES) {
    throw new ZkProtocolError(
      'zk_packet_too_short',
      `a ZK packet has an 8-byte header, this one has ${payload.length} byte(s)`,
    )
  }
  const checksum = payload.readUInt16LE(CHECKSUM_OFFSET)
  const expected = zkChecksum(payload, CHECKSUM_OFFSET)
  if (checksum !== expected) {
    throw new ZkProtocolError(
      'zk_bad_checksum',
      `ZK packet checksum 0x${hex4(checksum)} should be 0x${hex4(expected)} (cmd ${payload.readUInt16LE(0)})`,
    )
  }
  return {
    command: payload.readUInt16LE(0),
    sessionId: payload.readUInt16LE(4),
    replyNumber: payload.readUInt16LE(6),
    data: Buffer.from(payload.subarray(ZK_HEADER_BYTES)),
  }
}

/** A payload framed for TCP: magic, u32le length, payload. */
export function frameZkTcp(payload: Buffer): Buffer {
  const prefix = Buffer.alloc(ZK_TCP_PREFIX_BYTES)
  ZK_TCP_MAGIC.copy(prefix, 0)
  prefix.writeUInt32LE(payload.length, 4)
  return Buffer.concat([prefix, payload])
}

/** What a TCP chunk completed: the payloads, in order, and the error that stopped the stream, if any. */
export interface ZkTcpChunkResult {
  payloads: Buffer[]
  error?: ZkProtocolError
}

/**
 * Cuts a TCP byte stream into payloads, however the segments split or merge frames. A wrong magic
 * or a length over the bound stops the stream: the frames complete before it are still given, the
 * error comes with them, and every later push gives the same error and nothing else, since the
 * framing cannot be found again.
 */
export class ZkTcpReassembler {
  private readonly maxPacketBytes: number
  private pending: Buffer = Buffer.alloc(0)
  private failure: ZkProtocolError | undefined

  constructor(options: { maxPacketBytes?: number } = {}) {
    this.maxPacketBytes = options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES
  }

  push(chunk: Buffer): ZkTcpChunkResult {
    if (this.failure) return { payloads: [], error: this.failure }
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk])
    const payloads: Buffer[] = []
    let offset = 0
    for (;;) {
      const rest = this.pending.subarray(offset)
      // A wrong magic is seen as soon as its first bytes come, not once the whole prefix is there.
      const seen = Math.min(rest.length, ZK_TCP_MAGIC.length)
      if (!rest.subarray(0, seen).equals(ZK_TCP_MAGIC.subarray(0, seen))) {
        return this.fail(
          payloads,
          new ZkProtocolError(
            'zk_bad_magic',
            `a ZK TCP frame starts ${rest.subarray(0, seen).toString('hex')}`,
          ),
        )
      }
      if (rest.length < ZK_TCP_PREFIX_BYTES) break
      const length = rest.readUInt32LE(4)
      if (length > this.maxPacketBytes) {
        return this.fail(
          payloads,
          new ZkProtocolError(
            'zk_packet_too_large',
            `a ZK TCP frame announces ${length} bytes, more than the ${this.maxPacketBytes} allowed`,
          ),
        )
      }
      if (rest.length < ZK_TCP_PREFIX_BYTES + length) break
      payloads.push(Buffer.from(rest.subarray(ZK_TCP_PREFIX_BYTES, ZK_TCP_PREFIX_BYTES + length)))
      offset += ZK_TCP_PREFIX_BYTES + length
    }
    // Copied: the socket's buffer is reused, and a small remainder should not pin a large chunk.
    this.pending = Buffer.from(this.pending.subarray(offset))
    return { payloads }
  }

  /** Bytes of an unfinished frame: a stream that ends with some was cut mid-packet. */
  get bufferedBytes(): number {
    return this.pending.length
  }

  private fail(payloads: Buffer[], error: ZkProtocolError): ZkTcpChunkResult {
    this.failure = error
    this.pending = Buffer.alloc(0)
    return { payloads, error }
  }
}

function hex4(value: number): string {
  return value.toString(16).padStart(4, '0')
}
