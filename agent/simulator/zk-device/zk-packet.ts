import { zkChecksum } from './zk-checksum.js'

/** ZK protocol: the 8-byte payload header (cmd, checksum, session, reply; u16 LE each) then data. */
const ZK_HEADER_BYTES = 8
/** ZK protocol over TCP: `50 50 82 7D` and the u32 LE payload length before every payload. */
export const ZK_TCP_MAGIC = Buffer.from([0x50, 0x50, 0x82, 0x7d])
export const ZK_TCP_PREFIX_BYTES = 8

export interface ZkPacket {
  cmd: number
  session: number
  reply: number
  data: Buffer
}

/** A payload with its checksum (what UDP carries as is, and TCP after its prefix). */
export function encodeZkPayload(packet: ZkPacket): Buffer {
  const payload = Buffer.alloc(ZK_HEADER_BYTES + packet.data.length)
  payload.writeUInt16LE(packet.cmd, 0)
  payload.writeUInt16LE(packet.session & 0xffff, 4)
  payload.writeUInt16LE(packet.reply & 0xffff, 6)
  packet.data.copy(payload, ZK_HEADER_BYTES)
  payload.writeUInt16LE(zkChecksum(payload), 2)
  return payload
}

/** The TCP frame of a payload. */
export function tcpFrame(payload: Buffer): Buffer {
  const prefix = Buffer.alloc(ZK_TCP_PREFIX_BYTES)
  ZK_TCP_MAGIC.copy(prefix, 0)
  prefix.writeUInt32LE(payload.length, 4)
  return Buffer.concat([prefix, payload])
}

/** A payload's packet, or a reason it is none: too short, or a checksum that does not add up. */
export function decodeZkPayload(payload: Buffer): ZkPacket | string {
  if (payload.length < ZK_HEADER_BYTES) return `a payload of ${payload.length} bytes has no header`
  const checksum = payload.readUInt16LE(2)
  if (zkChecksum(payload) !== checksum) return 'bad checksum'
  return {
    cmd: payload.readUInt16LE(0),
    session: payload.readUInt16LE(4),
    reply: payload.readUInt16LE(6),
    data: payload.subarray(ZK_HEADER_BYTES),
  }
}
