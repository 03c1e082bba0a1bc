/**
 * A raw ZK 4370 client for the emulator's tests, written from the research notes' byte layouts
 * (docs: /work/shared research, "ZK binary protocol, port 4370") and sharing no code with the
 * emulator, so that a mistake in one is caught by the other. It checks every packet's checksum.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { connect, type Socket } from 'node:net'

export const CMD = {
  USERTEMP_RRQ: 9,
  OPTIONS_RRQ: 11,
  OPTIONS_WRQ: 12,
  ATTLOG_RRQ: 13,
  CLEAR_ATTLOG: 15,
  GET_FREE_SIZES: 50,
  GET_TIME: 201,
  SET_TIME: 202,
  REG_EVENT: 500,
  CONNECT: 1000,
  EXIT: 1001,
  ENABLEDEVICE: 1002,
  DISABLEDEVICE: 1003,
  GET_VERSION: 1100,
  AUTH: 1102,
  PREPARE_DATA: 1500,
  DATA: 1501,
  FREE_DATA: 1502,
  DATA_WRRQ: 1503,
  DATA_RDY: 1504,
  ACK_OK: 2000,
  ACK_ERROR: 2001,
  ACK_UNAUTH: 2005,
  ACK_UNKNOWN: 0xffff,
} as const

export interface Packet {
  cmd: number
  checksum: number
  session: number
  reply: number
  data: Buffer
}

/** RFC 1071: one's complement of the one's-complement sum of LE u16 words, checksum field as 0. */
export function checksum(payload: Buffer): number {
  const copy = Buffer.from(payload)
  copy.writeUInt16LE(0, 2)
  let sum = 0
  for (let i = 0; i < copy.length; i += 2) sum += copy[i]! + (i + 1 < copy.length ? copy[i + 1]! << 8 : 0)
  sum = (sum & 0xffff) + Math.floor(sum / 0x10000)
  sum = (sum & 0xffff) + (sum >>> 16)
  return 0xffff - sum
}

export function payload(cmd: number, session: number, reply: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const p = Buffer.concat([Buffer.alloc(8), data])
  p.writeUInt16LE(cmd, 0)
  p.writeUInt16LE(session, 4)
  p.writeUInt16LE(reply, 6)
  p.writeUInt16LE(checksum(p), 2)
  return p
}

function parse(p: Buffer): Packet {
  return {
    cmd: p.readUInt16LE(0),
    checksum: p.readUInt16LE(2),
    session: p.readUInt16LE(4),
    reply: p.readUInt16LE(6),
    data: p.subarray(8),
  }
}

/** MakeKey, from the notes: reverse bits, + session, ^ "ZKSO", swap halves, ^ ticks, byte 2 = ticks. */
export function authKey(key: number, session: number, ticks = 50): Buffer {
  let k = 0
  for (let i = 0; i < 32; i++) k = k * 2 + (Math.floor(key / 2 ** i) % 2)
  k = (k + session) % 2 ** 32
  const b = Buffer.alloc(4)
  b.writeUInt32LE(k)
  const x = [b[0]! ^ 0x5a, b[1]! ^ 0x4b, b[2]! ^ 0x53, b[3]! ^ 0x4f]
  const s = [x[2]!, x[3]!, x[0]!, x[1]!]
  return Buffer.from([s[0]! ^ ticks, s[1]! ^ ticks, ticks, s[3]! ^ ticks])
}

/** Device time: ((Y%100)*12*31 + (M-1)*31 + D-1)*86400 + (h*60+m)*60 + s, as text. */
export function decodeTime(t: number): string {
  const p = (n: number) => String(n).padStart(2, '0')
  const s = t % 60
  const mi = Math.floor(t / 60) % 60
  const h = Math.floor(t / 3600) % 24
  const days = Math.floor(t / 86400)
  const d = (days % 31) + 1
  const mo = (Math.floor(days / 31) % 12) + 1
  const y = Math.floor(days / 372) + 2000
  return `${y}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}`
}

export function encodeTime(text: string): number {
  const [y, mo, d, h, mi, s] = text.split(/[-T:]/).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  return ((y % 100) * 372 + (mo - 1) * 31 + d - 1) * 86400 + (h * 60 + mi) * 60 + s
}

export interface ReadRecord {
  uid: number
  userId: string
  time: string
  verify: number
  state: number
}

/** The records of an attendance dataset (u32 size, then records of 40, 16 or 8 bytes). */
export function decodeRecords(dataset: Buffer, recordSize: number): ReadRecord[] {
  const size = dataset.readUInt32LE(0)
  const body = dataset.subarray(4, 4 + size)
  const out: ReadRecord[] = []
  for (let at = 0; at + recordSize <= body.length; at += recordSize) {
    const r = body.subarray(at, at + recordSize)
    if (recordSize === 40) {
      const id = r.subarray(2, 26)
      out.push({
        uid: r.readUInt16LE(0),
        userId: id.subarray(0, id.indexOf(0) < 0 ? 24 : id.indexOf(0)).toString('ascii'),
        verify: r[26]!,
        time: decodeTime(r.readUInt32LE(27)),
        state: r[31]!,
      })
    } else if (recordSize === 16) {
      out.push({
        uid: 0,
        userId: String(r.readUInt32LE(0)),
        time: decodeTime(r.readUInt32LE(4)),
        verify: r[8]!,
        state: r[9]!,
      })
    } else {
      out.push({
        uid: r.readUInt16LE(0),
        userId: '',
        verify: r[2]!,
        time: decodeTime(r.readUInt32LE(3)),
        state: r[7]!,
      })
    }
  }
  return out
}

/** One client over TCP or UDP: a queue of the packets received, and requests that wait for theirs. */
export class ZkTestClient {
  session = 0
  private replyNo = 0
  readonly received: Packet[] = []
  /** Packets whose checksum did not add up (should stay 0). */
  badChecksums = 0
  closed = false
  private waiters: {
    match: (p: Packet) => boolean
    resolve: (p: Packet) => void
    reject: (e: Error) => void
  }[] = []
  private tcpPending = Buffer.alloc(0)
  /** Bytes of each TCP 'data' event, to see how replies were cut. */
  readonly tcpReads: number[] = []

  private constructor(
    readonly transport: 'tcp' | 'udp',
    private readonly tcp: Socket | undefined,
    private readonly udp: UdpSocket | undefined,
    private readonly port: number,
  ) {}

  static async open(transport: 'tcp' | 'udp', port: number): Promise<ZkTestClient> {
    if (transport === 'tcp') {
      const socket = connect(port, '127.0.0.1')
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve)
        socket.once('error', reject)
      })
      const client = new ZkTestClient('tcp', socket, undefined, port)
      socket.on('data', (bytes) => client.onTcp(bytes))
      socket.on('error', () => {})
      socket.on('close', () => client.onClose())
      return client
    }
    const socket = createSocket('udp4')
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
    const client = new ZkTestClient('udp', undefined, socket, port)
    socket.on('message', (msg) => client.onPacket(msg))
    return client
  }

  private onTcp(bytes: Buffer): void {
    this.tcpReads.push(bytes.length)
    this.tcpPending = Buffer.concat([this.tcpPending, bytes])
    while (this.tcpPending.length >= 8) {
      if (this.tcpPending.readUInt32BE(0) !== 0x5050827d) throw new Error('no ZK TCP prefix')
      const length = this.tcpPending.readUInt32LE(4)
      if (this.tcpPending.length < 8 + length) return
      this.onPacket(this.tcpPending.subarray(8, 8 + length))
      this.tcpPending = this.tcpPending.subarray(8 + length)
    }
  }

  private onPacket(raw: Buffer): void {
    if (checksum(raw) !== raw.readUInt16LE(2)) this.badChecksums++
    const packet = parse(Buffer.from(raw))
    const at = this.waiters.findIndex((w) => w.match(packet))
    if (at >= 0) this.waiters.splice(at, 1)[0]!.resolve(packet)
    else this.received.push(packet)
  }

  private onClose(): void {
    this.closed = true
    for (const w of this.waiters.splice(0)) w.reject(new Error('the device closed the connection'))
  }

  /** The next packet that matches, from those already received or still to come. */
  next(match: (p: Packet) => boolean = () => true): Promise<Packet> {
    const at = this.received.findIndex(match)
    if (at >= 0) return Promise.resolve(this.received.splice(at, 1)[0]!)
    if (this.closed) return Promise.reject(new Error('the device closed the connection'))
    return new Promise((resolve, reject) => this.waiters.push({ match, resolve, reject }))
  }

  sendRaw(p: Buffer): void {
    if (this.tcp) {
      const prefix = Buffer.from([0x50, 0x50, 0x82, 0x7d, 0, 0, 0, 0])
      prefix.writeUInt32LE(p.length, 4)
      this.tcp.write(Buffer.concat([prefix, p]))
    } else this.udp!.send(p, this.port, '127.0.0.1')
  }

  /** Sends a request with the next reply number; resolves with the first reply that echoes it. */
  request(cmd: number, data: Buffer = Buffer.alloc(0)): Promise<Packet> {
    const reply = cmd === CMD.CONNECT ? 0 : ++this.replyNo
    if (cmd === CMD.CONNECT) {
      // A new session numbers its replies from 0 again: what is left of an old one is stale.
      this.replyNo = 0
      this.received.length = 0
      for (const w of this.waiters.splice(0)) w.reject(new Error('a new session began'))
    }
    this.sendRaw(payload(cmd, this.session, reply, data))
    return this.next((p) => p.reply === reply && p.cmd !== CMD.REG_EVENT)
  }

  /** CONNECT, then AUTH with the comm key when the device asks for it; returns the last reply. */
  async connect(commKey = 0): Promise<Packet> {
    const reply = await this.request(CMD.CONNECT)
    this.session = reply.session
    if (reply.cmd !== CMD.ACK_UNAUTH) return reply
    return this.request(CMD.AUTH, authKey(commKey, this.session))
  }

  /**
   * Reads a dataset as the notes say: DATA_WRRQ, then (when the device answers ACK_OK + size)
   * DATA_RDY chunks one at a time, then FREE_DATA.
   */
  async readDataset(
    what: number = CMD.ATTLOG_RRQ,
    fct = 0,
    chunkSize = this.transport === 'tcp' ? 0xffc0 : 16 * 1024,
  ) {
    const req = Buffer.alloc(11)
    req.writeInt8(1, 0)
    req.writeInt16LE(what, 1)
    req.writeInt32LE(fct, 3)
    const first = await this.request(CMD.DATA_WRRQ, req)
    if (first.cmd === CMD.DATA) return { dataset: first.data, chunked: false }
    if (first.cmd !== CMD.ACK_OK) throw new Error(`DATA_WRRQ answered ${first.cmd}`)
    const size = first.data.readUInt32LE(1)
    const parts: Buffer[] = []
    for (let start = 0; start < size; start += chunkSize) {
      parts.push(await this.readChunk(start, Math.min(chunkSize, size - start)))
    }
    const free = await this.request(CMD.FREE_DATA)
    if (free.cmd !== CMD.ACK_OK) throw new Error(`FREE_DATA answered ${free.cmd}`)
    return { dataset: Buffer.concat(parts), chunked: true }
  }

  /** One chunk: PREPARE_DATA, DATA packet(s) and ACK_OK, all with the request's reply number. */
  async readChunk(start: number, size: number): Promise<Buffer> {
    const rdy = Buffer.alloc(8)
    rdy.writeInt32LE(start, 0)
    rdy.writeInt32LE(size, 4)
    const reply = ++this.replyNo
    this.sendRaw(payload(CMD.DATA_RDY, this.session, reply, rdy))
    const mine = (p: Packet) => p.reply === reply && p.cmd !== CMD.REG_EVENT
    const prepare = await this.next(mine)
    if (prepare.cmd !== CMD.PREPARE_DATA) throw new Error(`DATA_RDY answered ${prepare.cmd}`)
    if (prepare.data.readUInt32LE(0) !== size) throw new Error('PREPARE_DATA announces another size')
    const parts: Buffer[] = []
    for (;;) {
      const p = await this.next(mine)
      if (p.cmd === CMD.ACK_OK) break
      if (p.cmd !== CMD.DATA) throw new Error(`a chunk holds ${p.cmd}`)
      parts.push(p.data)
    }
    return Buffer.concat(parts)
  }

  async close(): Promise<void> {
    if (this.tcp) {
      this.tcp.destroy()
    } else if (this.udp) {
      const udp = this.udp
      await new Promise<void>((resolve) => udp.close(() => resolve()))
    }
    this.closed = true
  }
}
