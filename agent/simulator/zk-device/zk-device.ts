import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type Socket } from 'node:net'
import { ZkAttendanceLog, type ZkLogRecord, type ZkRecordFields } from './zk-attendance-log.js'
import { defaultEventSize, encodeAttlogEvent, ZK_EVENT_SIZES, type ZkEventSize } from './zk-attlog-event.js'
import { isCommKey } from './zk-comm-key.js'
import { EF_ATTLOG, FCT_USER, ZK_CMD } from './zk-commands.js'
import {
  emptyZkDeviceStats,
  type ZkDeviceFaults,
  type ZkDeviceOptions,
  type ZkDeviceStats,
  type ZkPunch,
} from './zk-device-options.js'
import { encodeFreeSizes } from './zk-free-sizes.js'
import { decodeZkPayload, encodeZkPayload, tcpFrame, type ZkPacket } from './zk-packet.js'
import { ZkTcpFramer } from './zk-tcp-framer.js'
import { ZkTcpLink } from './zk-tcp-link.js'
import { decodeZkTime, encodeZkTime, formatLocalTime, fromNaiveMs, naiveMs, toWallTime } from './zk-time.js'
import { ZkUserTable } from './zk-user-table.js'
import { ZkWallClock } from './zk-wall-clock.js'

interface Session {
  id: number
  authenticated: boolean
  /** CMD_REG_EVENT flags. */
  eventFlags: number
  /** The dataset CMD_DATA_WRRQ prepared, read in chunks until CMD_FREE_DATA. */
  dataset: Buffer | undefined
  chunksThisRead: number
  /** Host ms of the last request. */
  lastHeard: number
}

/** One client: a TCP connection, or a UDP address and port. */
interface Channel {
  transport: 'tcp' | 'udp'
  session: Session | undefined
  /** Requests are handled one after another, so replies keep their order whatever the delays. */
  chain: Promise<void>
  /** Sends payloads; with `cutLast`, only the first half of the last one's bytes, as a link that drops. */
  send(payloads: Buffer[], cutLast?: boolean): Promise<void>
  /** Over TCP, closes the connection once what was sent has gone out. */
  end(): void
  /** Over TCP, cuts the connection at once; over UDP, forgets the session. */
  close(): void
}

const DEFAULT_FAULTS: ZkDeviceFaults = {
  replyDelayMs: 0,
  dropAfterChunks: null,
  refuseSecondSession: true,
  splitTcpReplies: 0,
  mergeTcpReplies: false,
}

/**
 * A ZKTeco-family terminal on port 4370 as its firmware behaves (research notes, "ZK binary
 * protocol, port 4370"; zk-protocol; pyzk and node-zklib read to learn): TCP and UDP on one port
 * number, a session per client (one at a time by default), the comm key, options, free sizes, the
 * clock, the attendance log read whole or in chunks, and realtime events; with faults a test
 * switches at runtime in `faults`. The constructor does no I/O; start() listens, stop() closes
 * every socket and timer.
 */
export class ZkDevice {
  readonly faults: ZkDeviceFaults
  readonly stats: ZkDeviceStats = emptyZkDeviceStats()
  /** Every request's command code, in the order received (bad checksums left out). */
  readonly commands: number[] = []
  readonly users = new ZkUserTable()
  readonly clock: ZkWallClock
  serialNumber: string
  platform: string
  firmware: string
  fingerprintVersion: string
  /** 0 = none. */
  commKey: number
  /** Whether a client has disabled the device (CMD_DISABLEDEVICE) and not enabled it since. */
  disabled = false
  readonly options: Map<string, string>
  readonly eventSize: ZkEventSize
  readonly userCapacity: number

  private readonly attendance: ZkAttendanceLog
  private readonly host: string
  private readonly requestedPort: number
  private readonly hostNow: () => number
  private readonly random: () => number
  private readonly directDataLimit: number
  private readonly udpPacketData: number
  private readonly udpSessionIdleMs: number
  private readonly channels = new Set<Channel>()
  private readonly udpChannels = new Map<string, Channel>()
  private readonly sockets = new Set<Socket>()
  private readonly timers = new Map<NodeJS.Timeout, () => void>()
  private server: Server | undefined
  private udp: UdpSocket | undefined
  private boundPort = 0
  private stopped = false

  constructor(options: ZkDeviceOptions = {}) {
    this.host = options.host ?? '127.0.0.1'
    this.requestedPort = options.port ?? 0
    this.serialNumber = options.serialNumber ?? 'CGXH201360036'
    this.platform = options.platform ?? 'ZEM560_TFT'
    this.firmware = options.firmware ?? 'Ver 6.60 Apr 28 2017'
    this.fingerprintVersion = options.fingerprintVersion ?? '10'
    this.commKey = options.commKey ?? 0
    this.options = new Map(Object.entries(options.options ?? {}))
    this.hostNow = options.now ?? Date.now
    this.random = options.random ?? Math.random
    this.clock = new ZkWallClock(this.hostNow, options.time)
    const recordSize = options.recordSize ?? 40
    this.attendance = new ZkAttendanceLog(recordSize, options.recordCapacity ?? 100_000)
    this.eventSize = options.eventSize ?? defaultEventSize(recordSize)
    if (!ZK_EVENT_SIZES.includes(this.eventSize)) throw new TypeError(`no event is ${this.eventSize} bytes`)
    this.userCapacity = options.userCapacity ?? 3000
    this.directDataLimit = options.directDataLimit ?? 1016
    this.udpPacketData = options.udpPacketData ?? 1024
    this.udpSessionIdleMs = options.udpSessionIdleMs ?? 60_000
    this.faults = { ...DEFAULT_FAULTS, ...options.faults }
  }

  /** The TCP and UDP port number, once started. */
  get port(): number {
    return this.boundPort
  }

  get recordSize(): number {
    return this.attendance.recordSize
  }

  get recordCapacity(): number {
    return this.attendance.capacity
  }

  /** The attendance log, oldest first. */
  get records(): ZkLogRecord[] {
    return this.attendance.records((uid) => this.users.getByUid(uid)?.userId)
  }

  get recordCount(): number {
    return this.attendance.count
  }

  /** Open sessions (a UDP one until EXIT or it goes quiet). */
  get sessionCount(): number {
    return [...this.channels].filter((c) => c.session !== undefined).length
  }

  /** Listens on TCP and UDP; resolves with the port number. */
  async start(): Promise<number> {
    if (this.server || this.stopped) throw new Error('a ZkDevice starts once')
    for (let attempt = 0; ; attempt++) {
      const server = createServer((socket) => this.accept(socket))
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(this.requestedPort, this.host, () => resolve())
      })
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      const udp = createSocket(this.host.includes(':') ? 'udp6' : 'udp4')
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once('error', reject)
          udp.bind(port, this.host, () => resolve())
        })
      } catch (err) {
        udp.close()
        await new Promise((resolve) => server.close(resolve))
        // A free TCP port whose UDP twin is taken: try another.
        if (this.requestedPort === 0 && attempt < 20) continue
        throw err
      }
      udp.on('message', (msg, rinfo) => this.receiveUdp(msg, rinfo))
      udp.on('error', () => {})
      this.server = server
      this.udp = udp
      this.boundPort = port
      return port
    }
  }

  /** Closes every socket and timer; pending delayed replies are dropped. */
  async stop(): Promise<void> {
    this.stopped = true
    for (const [timer, resolve] of this.timers) {
      clearTimeout(timer)
      resolve()
    }
    this.timers.clear()
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    const server = this.server
    const udp = this.udp
    this.server = undefined
    this.udp = undefined
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()))
    if (server) await new Promise((resolve) => server.close(resolve))
    this.channels.clear()
    this.udpChannels.clear()
  }

  /** A punch at the terminal: written to the log and pushed to clients registered for EF_ATTLOG. */
  punch(punch: ZkPunch): ZkLogRecord {
    const fields = this.recordFields(punch)
    this.attendance.append(fields)
    this.pushEvent(fields)
    return { ...fields, time: formatLocalTime(fields.time) }
  }

  /**
   * Appends `count` records at once, with no events: a log as a device that has been in use for
   * years holds. By default user ids 1-100 in turn, a minute apart, the last a minute ago.
   */
  fillLog(count: number, make?: (index: number) => ZkPunch): void {
    const end = naiveMs(this.clock.now())
    const punchAt =
      make ??
      ((i: number) => ({ userId: String(1 + (i % 100)), time: fromNaiveMs(end - (count - i) * 60_000) }))
    for (let i = 0; i < count; i++) this.attendance.append(this.recordFields(punchAt(i)))
  }

  /** Empties the log, as CMD_CLEAR_ATTLOG or a person at the keypad does. */
  clearLog(): void {
    this.attendance.clear()
  }

  private recordFields(punch: ZkPunch): ZkRecordFields {
    const user = this.users.ensure(punch.userId)
    return {
      uid: user.uid,
      userId: user.userId,
      time: punch.time === undefined ? this.clock.now() : toWallTime(punch.time),
      verify: punch.verify ?? 1,
      state: punch.state ?? 0,
      workcode: punch.workcode ?? 0,
    }
  }

  private pushEvent(fields: ZkRecordFields): void {
    if (this.stopped) return
    let data: Buffer | undefined
    for (const channel of this.channels) {
      const session = channel.session
      if (!session?.authenticated || (session.eventFlags & EF_ATTLOG) === 0) continue
      data ??= encodeAttlogEvent(fields, this.eventSize)
      // ZK protocol, realtime packets: cmd 500, the event code in the session field, reply 0.
      void channel.send([encodeZkPayload({ cmd: ZK_CMD.CMD_REG_EVENT, session: EF_ATTLOG, reply: 0, data })])
      this.stats.eventsSent++
    }
  }

  private accept(socket: Socket): void {
    if (this.stopped) {
      socket.destroy()
      return
    }
    socket.setNoDelay(true)
    this.sockets.add(socket)
    const link = new ZkTcpLink(socket, this.faults, this.random)
    const framer = new ZkTcpFramer()
    const channel: Channel = {
      transport: 'tcp',
      session: undefined,
      chain: Promise.resolve(),
      send: (payloads, cutLast) => {
        const frames = payloads.map(tcpFrame)
        if (cutLast && frames.length > 0) {
          const last = frames.pop()!
          frames.push(last.subarray(0, Math.floor(last.length / 2)))
        }
        return link.send(frames)
      },
      end: () => socket.end(),
      close: () => socket.destroy(),
    }
    this.channels.add(channel)
    socket.on('data', (bytes) => {
      let payloads: Buffer[]
      try {
        payloads = framer.push(bytes)
      } catch {
        this.stats.badFrames++
        socket.destroy()
        return
      }
      for (const payload of payloads) this.enqueue(channel, payload)
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      this.sockets.delete(socket)
      this.channels.delete(channel)
      channel.session = undefined
    })
  }

  private receiveUdp(msg: Buffer, rinfo: RemoteInfo): void {
    if (this.stopped) return
    const key = `${rinfo.address}|${rinfo.port}`
    let channel = this.udpChannels.get(key)
    if (!channel) {
      const created: Channel = {
        transport: 'udp',
        session: undefined,
        chain: Promise.resolve(),
        send: async (payloads) => {
          for (const payload of payloads)
            if (this.udp && !this.stopped) this.udp.send(payload, rinfo.port, rinfo.address)
        },
        end: () => {},
        close: () => {
          created.session = undefined
        },
      }
      channel = created
      this.udpChannels.set(key, channel)
      this.channels.add(channel)
    }
    this.enqueue(channel, msg)
  }

  private enqueue(channel: Channel, payload: Buffer): void {
    channel.chain = channel.chain.then(() => this.handle(channel, payload)).catch(() => channel.close())
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        resolve()
      }, ms)
      this.timers.set(timer, resolve)
    })
  }

  /** Sends reply payloads after the configured delay, unless the device stopped meanwhile. */
  private async reply(channel: Channel, payloads: Buffer[], cutLast = false): Promise<void> {
    await this.sleep(this.faults.replyDelayMs)
    if (this.stopped) return
    await channel.send(payloads, cutLast)
  }

  private answer(
    channel: Channel,
    request: ZkPacket,
    cmd: number,
    data: Buffer = Buffer.alloc(0),
  ): Promise<void> {
    const session = channel.session?.id ?? 0
    return this.reply(channel, [encodeZkPayload({ cmd, session, reply: request.reply, data })])
  }

  private async handle(channel: Channel, payload: Buffer): Promise<void> {
    if (this.stopped) return
    const request = decodeZkPayload(payload)
    if (typeof request === 'string') {
      // A request that does not add up is dropped without a word; the client times out and retries.
      this.stats.badChecksums++
      return
    }
    if (request.cmd === ZK_CMD.CMD_ACK_OK) {
      // A client's acknowledgement of a realtime event: not a request, no reply.
      if (channel.session) this.stats.eventAcks++
      return
    }
    this.commands.push(request.cmd)
    if (channel.session) channel.session.lastHeard = this.hostNow()
    if (request.cmd === ZK_CMD.CMD_CONNECT) return this.connect(channel, request)
    const session = channel.session
    if (!session || request.session !== session.id)
      return this.answer(channel, request, ZK_CMD.CMD_ACK_UNAUTH)
    if (request.cmd === ZK_CMD.CMD_AUTH) {
      if (this.commKey === 0 || isCommKey(request.data, this.commKey, session.id)) {
        session.authenticated = true
        return this.answer(channel, request, ZK_CMD.CMD_ACK_OK)
      }
      this.stats.authFailures++
      return this.answer(channel, request, ZK_CMD.CMD_ACK_UNAUTH)
    }
    if (request.cmd === ZK_CMD.CMD_EXIT) {
      // The session ends with the request; the reply still carries its id.
      const ack = encodeZkPayload({
        cmd: ZK_CMD.CMD_ACK_OK,
        session: session.id,
        reply: request.reply,
        data: Buffer.alloc(0),
      })
      channel.session = undefined
      await this.reply(channel, [ack])
      channel.end()
      return
    }
    if (!session.authenticated) return this.answer(channel, request, ZK_CMD.CMD_ACK_UNAUTH)
    return this.command(channel, session, request)
  }

  private connect(channel: Channel, request: ZkPacket): Promise<void> {
    if (!channel.session) {
      if (this.faults.refuseSecondSession && this.otherSessionOpen(channel)) {
        this.stats.sessionsRefused++
        const refusal = this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
        return refusal.then(() => channel.end())
      }
      channel.session = {
        // ZK protocol: the device picks the session id; any u16 but 0, which means "none".
        id: 1 + Math.floor(this.random() * 0xfffe),
        authenticated: this.commKey === 0,
        eventFlags: 0,
        dataset: undefined,
        chunksThisRead: 0,
        lastHeard: this.hostNow(),
      }
      this.stats.sessions++
    }
    // A CONNECT on an open session keeps its id (zk-protocol `protocol.md`, "Session ID").
    const cmd = channel.session.authenticated ? ZK_CMD.CMD_ACK_OK : ZK_CMD.CMD_ACK_UNAUTH
    return this.answer(channel, request, cmd)
  }

  private otherSessionOpen(channel: Channel): boolean {
    for (const other of this.channels) {
      if (other === channel || !other.session) continue
      // UDP has no close: a session nobody has spoken on for a while is gone.
      if (other.transport === 'udp' && this.hostNow() - other.session.lastHeard > this.udpSessionIdleMs) {
        other.session = undefined
        continue
      }
      return true
    }
    return false
  }

  private async command(channel: Channel, session: Session, request: ZkPacket): Promise<void> {
    const ok = (data?: Buffer) => this.answer(channel, request, ZK_CMD.CMD_ACK_OK, data)
    const error = () => this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
    switch (request.cmd) {
      case ZK_CMD.CMD_OPTIONS_RRQ: {
        const name = cString(request.data)
        const value = this.option(name)
        // zk-protocol `terminal.md`: an option the device does not have is answered CMD_ACK_ERROR.
        return value === undefined ? error() : ok(Buffer.from(`${name}=${value}\0`, 'ascii'))
      }
      case ZK_CMD.CMD_OPTIONS_WRQ: {
        const text = cString(request.data)
        const eq = text.indexOf('=')
        if (eq <= 0) return error()
        this.options.set(text.slice(0, eq), text.slice(eq + 1))
        return ok()
      }
      case ZK_CMD.CMD_GET_VERSION:
        return ok(Buffer.from(`${this.firmware}\0`, 'ascii'))
      case ZK_CMD.CMD_GET_FREE_SIZES:
        return ok(
          encodeFreeSizes({
            users: this.users.count,
            fingers: 0,
            records: this.attendance.count,
            operationRecords: 0,
            admins: this.users.list().filter((u) => u.privilege !== 0).length,
            passwords: this.users.list().filter((u) => u.password !== '').length,
            fingerCapacity: this.userCapacity,
            userCapacity: this.userCapacity,
            recordCapacity: this.attendance.capacity,
            faces: 0,
            faceCapacity: 0,
          }),
        )
      case ZK_CMD.CMD_GET_TIME: {
        const data = Buffer.alloc(4)
        data.writeUInt32LE(encodeZkTime(this.clock.now()))
        return ok(data)
      }
      case ZK_CMD.CMD_SET_TIME: {
        if (request.data.length < 4) return error()
        try {
          this.clock.set(decodeZkTime(request.data.readUInt32LE(0)))
        } catch {
          return error()
        }
        return ok()
      }
      case ZK_CMD.CMD_DISABLEDEVICE:
        this.disabled = true
        return ok()
      case ZK_CMD.CMD_ENABLEDEVICE:
        this.disabled = false
        return ok()
      case ZK_CMD.CMD_REFRESHDATA:
        return ok()
      case ZK_CMD.CMD_CLEAR_ATTLOG:
        this.attendance.clear()
        return ok()
      case ZK_CMD.CMD_CLEAR_DATA: {
        // zk-protocol `data-record.md`, "Clear Data": 1 attendance, 5 users; nothing = everything.
        const kind = request.data[0]
        if (kind === undefined || kind === 1) this.attendance.clear()
        if (kind === undefined || kind === 5) this.users.clear()
        return ok()
      }
      case ZK_CMD.CMD_REG_EVENT: {
        const flags = request.data.length >= 4 ? request.data.readUInt32LE(0) : (request.data[0] ?? 0)
        session.eventFlags = flags
        return ok()
      }
      case ZK_CMD.CMD_DATA_WRRQ:
        return this.prepareData(channel, session, request)
      case ZK_CMD.CMD_DATA_RDY:
        return this.sendChunk(channel, session, request)
      case ZK_CMD.CMD_FREE_DATA:
        session.dataset = undefined
        session.chunksThisRead = 0
        return ok()
      default:
        return this.answer(channel, request, ZK_CMD.CMD_ACK_UNKNOWN)
    }
  }

  private option(name: string): string | undefined {
    switch (name) {
      case '~SerialNumber':
        return this.serialNumber
      case '~Platform':
        return this.platform
      case '~ZKFPVersion':
        return this.fingerprintVersion
      default:
        return this.options.get(name)
    }
  }

  /**
   * CMD_DATA_WRRQ `<b h i i>` (1, the read command, fct, ext): the dataset is a u32 size then the
   * records (research notes, "Bulk read"). A small one comes at once in CMD_DATA; a large one is
   * kept for CMD_DATA_RDY and announced by CMD_ACK_OK with `00, u32 size, u32 size, u32 sum`
   * (zk-protocol `ex_data.md`, "data stat").
   */
  private prepareData(channel: Channel, session: Session, request: ZkPacket): Promise<void> {
    if (request.data.length < 11) return this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
    const what = request.data.readUInt16LE(1)
    const fct = request.data.readUInt32LE(3)
    let body: Buffer
    if (what === ZK_CMD.CMD_ATTLOG_RRQ) body = this.attendance.encoded()
    else if (what === ZK_CMD.CMD_USERTEMP_RRQ && fct === FCT_USER)
      body = this.users.encode(this.attendance.recordSize === 8 ? 28 : 72)
    else return this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
    const size = Buffer.alloc(4)
    size.writeUInt32LE(body.length)
    const dataset = Buffer.concat([size, body])
    session.chunksThisRead = 0
    if (dataset.length <= this.directDataLimit) {
      session.dataset = undefined
      return this.answer(channel, request, ZK_CMD.CMD_DATA, dataset)
    }
    session.dataset = dataset
    const stat = Buffer.alloc(13)
    stat.writeUInt32LE(dataset.length, 1)
    stat.writeUInt32LE(dataset.length, 5)
    let sum = 0
    for (const byte of dataset) sum = (sum + byte) >>> 0
    stat.writeUInt32LE(sum, 9)
    return this.answer(channel, request, ZK_CMD.CMD_ACK_OK, stat)
  }

  /**
   * CMD_DATA_RDY `<i i>` (start, size): over TCP, CMD_PREPARE_DATA (u32 size, then 0x1000 as
   * zk-protocol saw), the chunk in one CMD_DATA and CMD_ACK_OK; over UDP, CMD_PREPARE_DATA, the
   * chunk in CMD_DATA packets of ~1 KiB (pyzk __recieve_chunk) and CMD_ACK_OK. All carry the
   * request's reply number (zk-protocol `ex_data.md`).
   */
  private async sendChunk(channel: Channel, session: Session, request: ZkPacket): Promise<void> {
    const dataset = session.dataset
    if (!dataset || request.data.length < 8) return this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
    const start = request.data.readInt32LE(0)
    const size = request.data.readInt32LE(4)
    if (start < 0 || size <= 0 || start + size > dataset.length)
      return this.answer(channel, request, ZK_CMD.CMD_ACK_ERROR)
    const chunk = dataset.subarray(start, start + size)
    const packet = (cmd: number, data: Buffer) =>
      encodeZkPayload({ cmd, session: session.id, reply: request.reply, data })
    const prepare = Buffer.alloc(8)
    prepare.writeUInt32LE(size, 0)
    prepare.writeUInt32LE(0x1000, 4)
    const payloads = [packet(ZK_CMD.CMD_PREPARE_DATA, prepare)]
    if (channel.transport === 'tcp') payloads.push(packet(ZK_CMD.CMD_DATA, chunk))
    else
      for (let at = 0; at < chunk.length; at += this.udpPacketData)
        payloads.push(packet(ZK_CMD.CMD_DATA, chunk.subarray(at, at + this.udpPacketData)))
    const drop = this.faults.dropAfterChunks
    if (drop !== null && session.chunksThisRead >= drop) {
      this.stats.drops++
      if (channel.transport === 'tcp') {
        await this.reply(channel, payloads, true)
        channel.close()
      } else {
        await this.reply(channel, payloads.slice(0, 1 + Math.floor((payloads.length - 1) / 2)))
        channel.session = undefined
      }
      return
    }
    payloads.push(packet(ZK_CMD.CMD_ACK_OK, Buffer.alloc(0)))
    session.chunksThisRead++
    this.stats.chunks++
    await this.reply(channel, payloads)
  }
}

/** Text up to its first NUL. */
function cString(data: Buffer): string {
  const end = data.indexOf(0)
  return data.subarray(0, end < 0 ? data.length : end).toString('ascii')
}
