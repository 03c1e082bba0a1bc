import { createSocket, type Socket as UdpSocket } from 'node:dgram'
import { createServer, type Server, type Socket } from 'node:net'

/**
 * The far end of agent-zk-read's baseline: a plain request/response peer on loopback, in the
 * benchmark's process as the emulator is. Each request is 8 bytes, `start u32le, size u32le`; the
 * answer is those bytes of `dataset` and nothing else: over TCP in one write, over UDP in datagrams
 * of `datagramBytes`, as the emulator sends a chunk's CMD_DATA packets (docs/development/zk-protocol.md:
 * 1 KiB each, what pyzk reads). Nothing is framed, checksummed or decoded: what a ZK read costs
 * beyond this loop is the protocol's and its implementations'.
 */
export class ZkRawPeer {
  private server: Server | undefined
  private udp: UdpSocket | undefined
  private readonly sockets = new Set<Socket>()
  private boundPort = 0

  constructor(
    private readonly dataset: Buffer,
    private readonly datagramBytes: number,
  ) {}

  /** TCP and UDP on one port number, as a terminal listens on 4370 for both. */
  get port(): number {
    return this.boundPort
  }

  async start(): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const server = createServer((socket) => this.accept(socket))
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(0, '127.0.0.1', () => resolve())
      })
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      const udp = createSocket('udp4')
      try {
        await new Promise<void>((resolve, reject) => {
          udp.once('error', reject)
          udp.bind(port, '127.0.0.1', () => resolve())
        })
      } catch (err) {
        udp.close()
        await new Promise((resolve) => server.close(resolve))
        // The UDP twin of a free TCP port may be taken: try another.
        if (attempt < 20) continue
        throw err
      }
      udp.on('message', (message, rinfo) => {
        const asked = this.asked(message)
        if (!asked) return
        for (let at = asked.start; at < asked.end; at += this.datagramBytes) {
          udp.send(
            this.dataset.subarray(at, Math.min(at + this.datagramBytes, asked.end)),
            rinfo.port,
            rinfo.address,
          )
        }
      })
      this.server = server
      this.udp = udp
      this.boundPort = port
      return port
    }
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    const udp = this.udp
    const server = this.server
    this.udp = undefined
    this.server = undefined
    if (udp) await new Promise<void>((resolve) => udp.close(() => resolve()))
    if (server) await new Promise((resolve) => server.close(resolve))
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true)
    this.sockets.add(socket)
    let pending: Buffer = Buffer.alloc(0)
    socket.on('data', (bytes: Buffer) => {
      pending = pending.length === 0 ? bytes : Buffer.concat([pending, bytes])
      while (pending.length >= 8) {
        const asked = this.asked(pending.subarray(0, 8))
        pending = pending.subarray(8)
        if (!asked) {
          socket.destroy()
          return
        }
        socket.write(this.dataset.subarray(asked.start, asked.end))
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => this.sockets.delete(socket))
  }

  /** The range a request asks for, or undefined when it is no request or out of the dataset. */
  private asked(request: Buffer): { start: number; end: number } | undefined {
    if (request.length !== 8) return undefined
    const start = request.readUInt32LE(0)
    const end = start + request.readUInt32LE(4)
    if (end <= start || end > this.dataset.length) return undefined
    return { start, end }
  }
}
