import { makeZkAuthKey } from './zk-auth-key.js'
import { ZkChunkCollector } from './zk-chunk-collector.js'
import { ZkCommand, ZkEventFlag, ZkReply, zkCodeName } from './zk-commands.js'
import { decodeZkFreeSizes, type ZkFreeSizes } from './zk-free-sizes.js'
import { DEFAULT_MAX_PACKET_BYTES, decodeZkPacket, encodeZkPacket, type ZkPacket } from './zk-packet.js'
import { ZkProtocolError } from './zk-protocol-error.js'
import { decodeZkAttlogEvent, type ZkAttlogEvent } from './zk-realtime.js'
import { openZkAttendanceDataset, type ZkAttendanceDataset, type ZkAttendanceLog } from './zk-records.js'
import { isZkRefusal, zkRefusal, zkUnexpectedReply } from './zk-reply-errors.js'
import { decodeZkTime, encodeZkTime, type ZkWallTime } from './zk-time.js'
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  openZkTransport,
  type ZkTransport,
  type ZkTransportKind,
} from './zk-transport.js'
import { decodeZkUsers, ZK_FCT_USER, ZK_USERTEMP_RRQ, type ZkUser } from './zk-users.js'

export const ZK_DEFAULT_PORT = 4370
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000
/** Largest log kept: 32 MiB is 800 000 40-byte records, more than any terminal's capacity. */
export const DEFAULT_MAX_DATASET_BYTES = 32 * 1024 * 1024
/** Chunk sizes asked for with CMD_DATA_RDY (ZK protocol: up to 0xFFC0 over TCP, 16 KiB over UDP). */
export const ZK_TCP_CHUNK_BYTES = 0xffc0
export const ZK_UDP_CHUNK_BYTES = 16 * 1024

export interface ZkClientOptions {
  host: string
  port?: number
  /** auto: TCP, and UDP when no TCP connection can be opened (devices that speak only UDP). */
  transport?: ZkTransportKind | 'auto'
  /** The device's comm key; 0 is the factory setting. */
  commKey?: number
  /** How long a request waits for the device's next packet before the session is given up. */
  requestTimeoutMs?: number
  connectTimeoutMs?: number
  maxPacketBytes?: number
  maxDatasetBytes?: number
  /** Largest chunk of a bulk read; defaults per transport. */
  maxChunkBytes?: number
  /** Each real-time event, already acknowledged. Must not throw. */
  onEvent?: (event: ZkEvent) => void
  /** The session ended: no error after close(), one when the device or the network ended it. */
  onClose?: (error: ZkProtocolError | undefined) => void
}

/** A real-time event (ZK protocol: cmd CMD_REG_EVENT from the device, the event code as session). */
export type ZkEvent =
  | { type: 'attlog'; attlog: ZkAttlogEvent }
  /** An EF_ATTLOG event whose payload could not be read: reported, never dropped unseen. */
  | { type: 'malformed'; eventCode: number; data: string; error: string }
  /** Another event code (finger pressed, alarm...): not read here. */
  | { type: 'other'; eventCode: number; data: Buffer }

export interface ZkDeviceInfo {
  serialNumber?: string
  platform?: string
  firmware?: string
}

export interface ZkAttendanceRead extends ZkAttendanceDataset {
  freeSizes: ZkFreeSizes
}

/** Decides on each packet of an exchange: a value ends it, undefined waits for the next. */
type ReplyHandler<T> = (packet: ZkPacket) => T | undefined

interface Pending {
  command: number
  replyNumber: number
  handle: ReplyHandler<unknown>
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  timer: NodeJS.Timeout
}

const EMPTY = Buffer.alloc(0)
/** A dataset of no records: its u32 size, 0. */
const EMPTY_DATASET = Buffer.alloc(4)
const REPLY_NUMBERS = 0x10000

/**
 * A session with a ZK terminal on port 4370. Requests go one at a time: each waits for the
 * previous exchange to end, and a reply is matched by its reply number (ZK protocol: the device
 * echoes the client's counter). A timeout, a corrupt packet or a dropped connection ends the
 * session, since what the device will send next is then unknown; the caller connects again.
 * CMD_CLEAR_ATTLOG is sent only by clearAttendanceLog().
 */
export class ZkClient {
  private transport: ZkTransport | undefined
  private sessionIdValue = 0
  private nextReplyNumber = 0
  private pending: Pending | undefined
  private queue: Promise<unknown> = Promise.resolve()
  private ended: ZkProtocolError | undefined
  private closeReported = false
  private readonly requestTimeoutMs: number
  private readonly maxDatasetBytes: number
  private readonly maxChunkBytesOption: number | undefined

  private constructor(private readonly options: ZkClientOptions) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    this.maxDatasetBytes = options.maxDatasetBytes ?? DEFAULT_MAX_DATASET_BYTES
    this.maxChunkBytesOption = options.maxChunkBytes
    for (const [name, value] of Object.entries({
      requestTimeoutMs: this.requestTimeoutMs,
      maxDatasetBytes: this.maxDatasetBytes,
      maxChunkBytes: this.maxChunkBytesOption ?? 1,
    })) {
      if (!Number.isInteger(value) || value < 1)
        throw new RangeError(`${name} must be a positive integer, got ${value}`)
    }
  }

  /** Opens the connection and the session (CMD_CONNECT, then CMD_AUTH when the device asks). */
  static async connect(options: ZkClientOptions): Promise<ZkClient> {
    const client = new ZkClient(options)
    await client.open()
    return client
  }

  get sessionId(): number {
    return this.sessionIdValue
  }

  get transportKind(): ZkTransportKind | undefined {
    return this.transport?.kind
  }

  get isOpen(): boolean {
    return this.transport !== undefined && this.ended === undefined
  }

  /** Serial number, platform (~SerialNumber, ~Platform options) and firmware (CMD_GET_VERSION). */
  readDeviceInfo(): Promise<ZkDeviceInfo> {
    return this.locked(async () => {
      const info: ZkDeviceInfo = {}
      const serialNumber = await this.option('~SerialNumber')
      if (serialNumber !== undefined) info.serialNumber = serialNumber
      const platform = await this.option('~Platform')
      if (platform !== undefined) info.platform = platform
      const version = await this.exchange(ZkCommand.GET_VERSION, EMPTY, (p) => p)
      if (version.command === ZkReply.ACK_OK) info.firmware = cString(version.data)
      else if (!isZkRefusal(version.command)) throw zkUnexpectedReply(ZkCommand.GET_VERSION, version)
      return info
    })
  }

  /** One option by name (CMD_OPTIONS_RRQ), undefined when the device does not have it. */
  readOption(name: string): Promise<string | undefined> {
    return this.locked(() => this.option(name))
  }

  readFreeSizes(): Promise<ZkFreeSizes> {
    return this.locked(async () => decodeZkFreeSizes(await this.command(ZkCommand.GET_FREE_SIZES)))
  }

  getTime(): Promise<ZkWallTime> {
    return this.locked(async () => {
      const data = await this.command(ZkCommand.GET_TIME)
      if (data.length < 4) throw new ZkProtocolError('zk_unexpected_reply', 'CMD_GET_TIME answered no time')
      return decodeZkTime(data.readUInt32LE(0))
    })
  }

  setTime(time: ZkWallTime): Promise<void> {
    const data = Buffer.alloc(4)
    data.writeUInt32LE(encodeZkTime(time))
    return this.locked(async () => {
      await this.command(ZkCommand.SET_TIME, data)
    })
  }

  disableDevice(): Promise<void> {
    return this.locked(async () => {
      await this.command(ZkCommand.DISABLEDEVICE)
    })
  }

  enableDevice(): Promise<void> {
    return this.locked(async () => {
      await this.command(ZkCommand.ENABLEDEVICE)
    })
  }

  /**
   * The whole attendance log (the device keeps no cursor), every record decoded. The device is
   * disabled while it is read, so that its record count and its dataset agree, and enabled again
   * whatever happens, as long as the connection lasts.
   */
  async readAttendance(): Promise<ZkAttendanceRead> {
    const { freeSizes, log } = await this.readAttendanceLog()
    const dataset: ZkAttendanceDataset = { recordBytes: log.recordBytes, records: [], malformed: [] }
    for (let index = 0; index < log.length; index++) {
      const entry = log.at(index)
      if ('record' in entry) dataset.records.push(entry.record)
      else dataset.malformed.push(entry.malformed)
    }
    return { freeSizes, ...dataset }
  }

  /**
   * The whole attendance log as readAttendance() reads it, its records decoded only when asked for:
   * what the agent uses, since a decoded log of 100,000 records takes several times its 4 MB.
   */
  readAttendanceLog(): Promise<{ freeSizes: ZkFreeSizes; log: ZkAttendanceLog }> {
    return this.locked(async () => {
      await this.command(ZkCommand.DISABLEDEVICE)
      let failed = true
      try {
        const freeSizes = decodeZkFreeSizes(await this.command(ZkCommand.GET_FREE_SIZES))
        const dataset = freeSizes.records === 0 ? EMPTY_DATASET : await this.readBuffer(ZkCommand.ATTLOG_RRQ)
        const log = openZkAttendanceDataset(dataset, freeSizes.records)
        failed = false
        return { freeSizes, log }
      } finally {
        await this.afterRead(ZkCommand.ENABLEDEVICE, failed)
      }
    })
  }

  /**
   * The users enrolled on the device (read only: nothing here writes users), for the uid of 8-byte
   * records, which name no PIN. The device stays enabled: a user enrolled meanwhile makes the sizes
   * disagree, and the read fails with zk_bad_dataset rather than return a wrong table. Entries that
   * cannot be read are left out (decodeZkUsers reports them): their uids then map to no PIN, as an
   * unknown one would.
   */
  readUsers(): Promise<ZkUser[]> {
    return this.locked(async () => {
      const freeSizes = decodeZkFreeSizes(await this.command(ZkCommand.GET_FREE_SIZES))
      if (freeSizes.users === 0) return []
      return decodeZkUsers(await this.readBuffer(ZK_USERTEMP_RRQ, ZK_FCT_USER), freeSizes.users).users
    })
  }

  /** CMD_REG_EVENT: the device then sends the events of these flags as they happen. */
  registerEvents(flags: number = ZkEventFlag.ATTLOG): Promise<void> {
    const data = Buffer.alloc(4)
    data.writeUInt32LE(flags >>> 0)
    return this.locked(async () => {
      await this.command(ZkCommand.REG_EVENT, data)
    })
  }

  /** Deletes every attendance record on the device (CMD_CLEAR_ATTLOG). Nothing else sends it. */
  clearAttendanceLog(): Promise<void> {
    return this.locked(async () => {
      await this.command(ZkCommand.CLEAR_ATTLOG)
    })
  }

  /** Ends the session (CMD_EXIT, its answer awaited within the timeout) and the connection. */
  close(): Promise<void> {
    return this.locked(async () => {
      if (!this.isOpen) return
      try {
        await this.exchange(ZkCommand.EXIT, EMPTY, (p) => p)
      } catch {
        // The connection is closed below whatever the device made of CMD_EXIT.
      }
      this.end(undefined)
    })
  }

  private async open(): Promise<void> {
    const kind = this.options.transport ?? 'auto'
    /** In auto, why TCP failed: said with UDP's own failure, which alone would hide it. */
    let overTcp: ZkProtocolError | undefined
    const withTcp = (error: unknown) =>
      overTcp && error instanceof ZkProtocolError
        ? new ZkProtocolError(error.code, `${error.message} (over UDP; over TCP: ${overTcp.message})`, {
            cause: error,
          })
        : error
    try {
      this.transport = await this.openTransport(kind === 'auto' ? 'tcp' : kind)
    } catch (error) {
      if (kind !== 'auto' || !(error instanceof ZkProtocolError) || error.code !== 'zk_unreachable')
        throw error
      overTcp = error
      this.transport = await this.openTransport('udp').catch((udpError: unknown) => {
        throw withTcp(udpError)
      })
    }
    try {
      await this.locked(() => this.openSession())
    } catch (error) {
      this.end(error instanceof ZkProtocolError ? error : undefined)
      throw withTcp(error)
    }
  }

  private openTransport(kind: ZkTransportKind): Promise<ZkTransport> {
    return openZkTransport(
      {
        host: this.options.host,
        port: this.options.port ?? ZK_DEFAULT_PORT,
        kind,
        maxPacketBytes: this.options.maxPacketBytes ?? DEFAULT_MAX_PACKET_BYTES,
        connectTimeoutMs: this.options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      },
      {
        onPayload: (payload) => this.receive(payload),
        onClose: (error) => this.transportClosed(error),
      },
    )
  }

  private async openSession(): Promise<void> {
    // ZK protocol: CMD_CONNECT with session 0 and reply 0; the answer assigns the session.
    this.sessionIdValue = 0
    this.nextReplyNumber = 0
    let reply: ZkPacket
    try {
      reply = await this.exchange(ZkCommand.CONNECT, EMPTY, (p) => p)
    } catch (error) {
      if (error instanceof ZkProtocolError && error.code === 'zk_connection_closed') {
        throw new ZkProtocolError('zk_session_refused', `the device ended the connection at CMD_CONNECT`, {
          cause: error,
        })
      }
      throw error
    }
    if (reply.command !== ZkReply.ACK_OK && reply.command !== ZkReply.ACK_UNAUTH) {
      throw new ZkProtocolError(
        'zk_session_refused',
        `the device answered CMD_CONNECT with ${zkCodeName(reply.command)}`,
        {
          replyCode: reply.command,
        },
      )
    }
    this.sessionIdValue = reply.sessionId
    if (reply.command === ZkReply.ACK_OK) return
    // ZK protocol: CMD_ACK_UNAUTH asks for CMD_AUTH with the key derived from the comm key.
    const key = makeZkAuthKey(this.options.commKey ?? 0, this.sessionIdValue)
    const auth = await this.exchange(ZkCommand.AUTH, key, (p) => p)
    if (auth.command !== ZkReply.ACK_OK) {
      // The session the device opened is ended, so that it does not hold the device: over UDP
      // nothing else tells it the client has gone, and it allows one session at a time.
      await this.exchange(ZkCommand.EXIT, EMPTY, (p) => p).catch(() => undefined)
      throw new ZkProtocolError(
        'zk_auth_refused',
        `the device answered CMD_AUTH with ${zkCodeName(auth.command)}`,
        {
          replyCode: auth.command,
        },
      )
    }
  }

  private async option(name: string): Promise<string | undefined> {
    const reply = await this.exchange(ZkCommand.OPTIONS_RRQ, Buffer.from(`${name}\0`, 'latin1'), (p) => p)
    if (isZkRefusal(reply.command)) return undefined
    if (reply.command !== ZkReply.ACK_OK) throw zkUnexpectedReply(ZkCommand.OPTIONS_RRQ, reply)
    // ZK protocol: "<name>=<value>\0".
    const text = cString(reply.data)
    const equals = text.indexOf('=')
    return equals === -1 ? undefined : text.slice(equals + 1)
  }

  /** A request answered by CMD_ACK_OK; its data. */
  private async command(command: number, data: Buffer = EMPTY): Promise<Buffer> {
    const reply = await this.exchange(command, data, (p) => p)
    if (reply.command === ZkReply.ACK_OK) return reply.data
    throw zkRefusal(command, reply)
  }

  /**
   * ZK protocol bulk read: CMD_DATA_WRRQ; a small dataset comes whole in CMD_DATA, a large one is
   * announced by CMD_ACK_OK with its size and read by chunks, one request at a time, then the
   * device's buffer is released with CMD_FREE_DATA.
   */
  private async readBuffer(dataCommand: number, fct = 0): Promise<Buffer> {
    // ZK protocol CMD_DATA_WRRQ data `<bhii`: 1, the data command, its fct (0 for the log,
    // FCT_USER for the user table), then a zero word.
    const request = Buffer.alloc(11)
    request.writeInt8(1, 0)
    request.writeUInt16LE(dataCommand, 1)
    request.writeUInt32LE(fct, 3)
    const first = await this.exchange(ZkCommand.DATA_WRRQ, request, (p) => p)
    if (first.command === ZkCommand.DATA) {
      this.checkDatasetSize(first.data.length)
      return first.data
    }
    if (first.command !== ZkReply.ACK_OK) throw zkRefusal(ZkCommand.DATA_WRRQ, first)
    if (first.data.length < 5) {
      throw new ZkProtocolError('zk_unexpected_reply', `CMD_DATA_WRRQ was acknowledged without a size`)
    }
    const size = first.data.readUInt32LE(1)
    let failed = true
    try {
      this.checkDatasetSize(size)
      const chunks: Buffer[] = []
      const chunkBytes = this.maxChunkBytes()
      for (let start = 0; start < size; start += chunkBytes) {
        chunks.push(await this.readChunk(start, Math.min(chunkBytes, size - start)))
      }
      failed = false
      return Buffer.concat(chunks, size)
    } finally {
      await this.afterRead(ZkCommand.FREE_DATA, failed)
    }
  }

  /** One chunk of the prepared dataset (CMD_DATA_RDY `<start u32, size u32>`). */
  private readChunk(start: number, size: number): Promise<Buffer> {
    const request = Buffer.alloc(8)
    request.writeUInt32LE(start, 0)
    request.writeUInt32LE(size, 4)
    const collector = new ZkChunkCollector(start, size)
    return this.exchange(ZkCommand.DATA_RDY, request, (packet) => collector.accept(packet))
  }

  private maxChunkBytes(): number {
    if (this.maxChunkBytesOption !== undefined) return this.maxChunkBytesOption
    return this.transport?.kind === 'udp' ? ZK_UDP_CHUNK_BYTES : ZK_TCP_CHUNK_BYTES
  }

  private checkDatasetSize(size: number): void {
    if (size > this.maxDatasetBytes) {
      throw new ZkProtocolError(
        'zk_dataset_too_large',
        `the device has a dataset of ${size} bytes, more than the ${this.maxDatasetBytes} allowed`,
      )
    }
  }

  /**
   * CMD_FREE_DATA or CMD_ENABLEDEVICE after a read, whatever its outcome. Its failure is the read's
   * only when the read itself succeeded, so the first cause is the one reported. A dropped
   * connection cannot carry it: what the device then does is up to its firmware.
   */
  private async afterRead(command: number, readFailed: boolean): Promise<void> {
    if (!this.isOpen) return
    try {
      await this.command(command)
    } catch (error) {
      if (!readFailed) throw error
    }
  }

  /** Runs `task` once every earlier task has ended, so that one exchange is in flight at a time. */
  private locked<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task)
    // Only the turn is kept, not the result: a log read would otherwise stay in memory until the
    // next request.
    this.queue = run.then(
      () => undefined,
      () => undefined,
    )
    return run
  }

  /** Sends one request and feeds the packets carrying its reply number to `handle`. */
  private exchange<T>(command: number, data: Buffer, handle: ReplyHandler<T>): Promise<T> {
    const transport = this.transport
    if (!transport || this.ended) {
      return Promise.reject(
        this.ended ?? new ZkProtocolError('zk_connection_closed', 'the ZK session is not open'),
      )
    }
    const replyNumber = this.nextReplyNumber
    this.nextReplyNumber = (this.nextReplyNumber + 1) % REPLY_NUMBERS
    return new Promise<T>((resolve, reject) => {
      this.pending = {
        command,
        replyNumber,
        handle,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer: this.startTimer(command),
      }
      transport.send(encodeZkPacket({ command, sessionId: this.sessionIdValue, replyNumber, data }))
    })
  }

  private startTimer(command: number): NodeJS.Timeout {
    return setTimeout(() => {
      this.end(
        new ZkProtocolError(
          'zk_timeout',
          `the device sent nothing for ${zkCodeName(command)} within ${this.requestTimeoutMs} ms`,
        ),
      )
    }, this.requestTimeoutMs)
  }

  private receive(payload: Buffer): void {
    let packet: ZkPacket
    try {
      packet = decodeZkPacket(payload)
    } catch (error) {
      this.end(error as ZkProtocolError)
      return
    }
    if (packet.command === ZkCommand.REG_EVENT) {
      this.event(packet)
      return
    }
    const pending = this.pending
    // A reply to an earlier request (UDP duplicates, late answers) has another number: not ours.
    if (!pending || packet.replyNumber !== pending.replyNumber) return
    clearTimeout(pending.timer)
    let result: unknown
    try {
      result = pending.handle(packet)
    } catch (error) {
      this.pending = undefined
      pending.reject(error)
      return
    }
    if (result === undefined) {
      pending.timer = this.startTimer(pending.command)
      return
    }
    this.pending = undefined
    pending.resolve(result)
  }

  /** ZK protocol: every event is answered with CMD_ACK_OK carrying the event's own reply number. */
  private event(packet: ZkPacket): void {
    this.transport?.send(
      encodeZkPacket({
        command: ZkReply.ACK_OK,
        sessionId: this.sessionIdValue,
        replyNumber: packet.replyNumber,
        data: EMPTY,
      }),
    )
    const onEvent = this.options.onEvent
    if (!onEvent) return
    const eventCode = packet.sessionId
    if (eventCode !== ZkEventFlag.ATTLOG) {
      onEvent({ type: 'other', eventCode, data: packet.data })
      return
    }
    let attlog: ZkAttlogEvent
    try {
      attlog = decodeZkAttlogEvent(packet.data)
    } catch (error) {
      onEvent({
        type: 'malformed',
        eventCode,
        data: packet.data.toString('hex'),
        error: (error as Error).message,
      })
      return
    }
    onEvent({ type: 'attlog', attlog })
  }

  private transportClosed(error: ZkProtocolError | undefined): void {
    this.end(
      error ??
        (this.ended
          ? undefined
          : new ZkProtocolError('zk_connection_closed', 'the ZK connection was closed')),
    )
  }

  /** Ends the session once: the pending request fails with the reason, the connection closes. */
  private end(reason: ZkProtocolError | undefined): void {
    const error = reason ?? new ZkProtocolError('zk_connection_closed', 'the ZK session was closed')
    this.ended ??= error
    const pending = this.pending
    this.pending = undefined
    if (pending) {
      clearTimeout(pending.timer)
      pending.reject(error)
    }
    // Reported before closing the transport, whose own close calls back here.
    if (!this.closeReported) {
      this.closeReported = true
      this.options.onClose?.(reason)
    }
    this.transport?.close()
  }
}

/** A NUL-terminated string from a reply (ZK protocol option and version strings). */
function cString(data: Buffer): string {
  const end = data.indexOf(0)
  return data.subarray(0, end === -1 ? data.length : end).toString('latin1')
}
