import { ZK_TCP_MAGIC, ZK_TCP_PREFIX_BYTES } from './zk-packet.js'

/** No request a client sends is near this; a longer length is a stream out of step. */
const MAX_PAYLOAD_BYTES = 1 << 20

/**
 * Cuts a TCP byte stream into ZK payloads: each is `50 50 82 7D`, a u32 LE length and that many
 * bytes (ZK protocol, "Packet Fields"). TCP may deliver a frame in pieces or several at once.
 */
export class ZkTcpFramer {
  private pending: Buffer = Buffer.alloc(0)

  /** The whole payloads the bytes complete; throws when the stream is not ZK framing. */
  push(bytes: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes])
    const payloads: Buffer[] = []
    while (this.pending.length >= ZK_TCP_PREFIX_BYTES) {
      if (!this.pending.subarray(0, 4).equals(ZK_TCP_MAGIC)) throw new Error('no ZK TCP prefix')
      const length = this.pending.readUInt32LE(4)
      if (length > MAX_PAYLOAD_BYTES) throw new Error(`a ZK TCP frame of ${length} bytes`)
      if (this.pending.length < ZK_TCP_PREFIX_BYTES + length) break
      payloads.push(this.pending.subarray(ZK_TCP_PREFIX_BYTES, ZK_TCP_PREFIX_BYTES + length))
      this.pending = this.pending.subarray(ZK_TCP_PREFIX_BYTES + length)
    }
    return payloads
  }
}
