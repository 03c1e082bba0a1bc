import { ZkCommand, ZkReply } from './zk-commands.js'
import type { ZkPacket } from './zk-packet.js'
import { ZkProtocolError } from './zk-protocol-error.js'
import { zkRefusal, zkUnexpectedReply } from './zk-reply-errors.js'

/**
 * Gathers one chunk of a bulk read from the packets answering its CMD_DATA_RDY (all carry the
 * request's reply number). Over TCP the device sends CMD_PREPARE_DATA with the size, CMD_DATA with
 * the bytes and CMD_ACK_OK; over UDP the bytes come in several CMD_DATA packets before the
 * CMD_ACK_OK; a device that answers with CMD_DATA alone sends the chunk whole. More bytes than
 * asked for, or fewer at the end, is an error: never a silently short dataset.
 */
export class ZkChunkCollector {
  private prepared: number | undefined
  private received = 0
  private readonly parts: Buffer[] = []

  constructor(
    private readonly start: number,
    private readonly size: number,
  ) {}

  /** The chunk once it is complete, undefined while more packets are due. */
  accept(packet: ZkPacket): Buffer | undefined {
    switch (packet.command) {
      case ZkCommand.PREPARE_DATA: {
        if (this.prepared !== undefined || this.received > 0 || packet.data.length < 4) {
          throw zkUnexpectedReply(ZkCommand.DATA_RDY, packet)
        }
        this.prepared = packet.data.readUInt32LE(0)
        if (this.prepared !== this.size) this.fail(`the device prepared ${this.prepared} bytes`)
        return undefined
      }
      case ZkCommand.DATA: {
        this.received += packet.data.length
        if (this.received > this.size) this.fail(`the device sent ${this.received} bytes or more`)
        this.parts.push(packet.data)
        const whole = this.prepared === undefined && this.received === this.size
        return whole ? Buffer.concat(this.parts, this.size) : undefined
      }
      case ZkReply.ACK_OK: {
        if (this.prepared === undefined) throw zkUnexpectedReply(ZkCommand.DATA_RDY, packet)
        if (this.received !== this.size) this.fail(`the device ended it after ${this.received} bytes`)
        return Buffer.concat(this.parts, this.size)
      }
      default:
        throw zkRefusal(ZkCommand.DATA_RDY, packet)
    }
  }

  private fail(what: string): never {
    throw new ZkProtocolError(
      'zk_bad_dataset',
      `${what} for the chunk of ${this.size} bytes at ${this.start}`,
    )
  }
}
