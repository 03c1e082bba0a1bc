/**
 * The network between the agent and the cloud, as the chaos test wants it: a
 * TCP proxy like TcpProxy (e2e-kit.ts) that can also be made slow. `cut()` drops every connection
 * and stops listening (the link is down: new connections are refused); `slow()` delays every piece
 * of data by a random latency and throttles each direction of each connection to a byte rate (a
 * congested mobile link); `restore()` makes it a plain pipe on the same port again. It counts what
 * it did, for the test's table.
 */
import net, { type AddressInfo } from 'node:net'

export interface SlowLink {
  /** Each piece of data waits a random time in this range before it may go on (ms). */
  latencyMs: [number, number]
  /** Bytes a second each direction of each connection carries at most. */
  bytesPerSecond: number
}

/** How much a connection may have queued in one direction before its sender is paused. */
const HIGH_WATER_BYTES = 64 * 1024
/** Slow data goes on in pieces this big at most, so a big write trickles rather than jumps. */
const SLICE_BYTES = 512

/**
 * One direction of one connection: data is queued with the time it may be written, and written in
 * order as those times come. Unshaped, the time is now and it flows through at once.
 */
class Lane {
  private readonly queue: { due: number; data: Buffer }[] = []
  private queuedBytes = 0
  private timer: NodeJS.Timeout | undefined
  /** When the last piece queued may go: the next may go no sooner (order, and the byte rate). */
  private lastDue = 0
  private ended = false

  constructor(
    private readonly from: net.Socket,
    private readonly to: net.Socket,
    private readonly shaping: () => SlowLink | undefined,
    private readonly random: () => number,
    private readonly written: (bytes: number) => void,
  ) {
    from.on('data', (data: Buffer) => this.push(data))
    from.once('end', () => {
      this.ended = true
      this.pump()
    })
  }

  private push(data: Buffer): void {
    const link = this.shaping()
    const now = Date.now()
    if (!link && this.queue.length === 0) {
      this.written(data.length)
      this.to.write(data)
      return
    }
    for (let at = 0; at < data.length; at += SLICE_BYTES) {
      const slice = data.subarray(at, at + SLICE_BYTES)
      let due = now
      if (link) {
        const [low, high] = link.latencyMs
        const latency = low + this.random() * (high - low)
        due = Math.max(now + latency, this.lastDue) + (slice.length / link.bytesPerSecond) * 1000
      }
      this.lastDue = Math.max(this.lastDue, due)
      this.queue.push({ due: this.lastDue, data: slice })
      this.queuedBytes += slice.length
    }
    if (this.queuedBytes > HIGH_WATER_BYTES) this.from.pause()
    this.pump()
  }

  private pump(): void {
    if (this.timer) return
    const now = Date.now()
    while (this.queue.length > 0 && (this.queue[0] as { due: number }).due <= now) {
      const { data } = this.queue.shift() as { due: number; data: Buffer }
      this.queuedBytes -= data.length
      this.written(data.length)
      if (!this.to.destroyed) this.to.write(data)
    }
    if (this.queuedBytes <= HIGH_WATER_BYTES && this.from.isPaused()) this.from.resume()
    const next = this.queue[0]
    if (next) {
      this.timer = setTimeout(
        () => {
          this.timer = undefined
          this.pump()
        },
        Math.max(1, next.due - now),
      )
      return
    }
    if (this.ended && !this.to.destroyed) this.to.end()
  }

  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.queue.length = 0
    this.queuedBytes = 0
  }
}

export class FaultProxy {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private readonly lanes = new Set<Lane>()
  private link: SlowLink | undefined
  private closed = false
  port = 0
  readonly counts = {
    /** Connections accepted and passed on. */
    connections: 0,
    /** Connections cut while open (by cut(), slow() or restore()). */
    dropped: 0,
    /** Bytes passed on, both directions. */
    bytes: 0,
    /** Of those, bytes passed on while the link was slow. */
    slowBytes: 0,
  }

  constructor(
    private readonly target: { host: string; port: number },
    private readonly random: () => number = Math.random,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  get state(): 'up' | 'slow' | 'cut' {
    if (!this.server) return 'cut'
    return this.link ? 'slow' : 'up'
  }

  async listen(port = this.port): Promise<void> {
    if (this.closed) throw new Error('the proxy is closed')
    const server = net.createServer((socket) => this.accept(socket))
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject)
        resolve()
      })
    })
    this.server = server
    this.port = (server.address() as AddressInfo).port
  }

  /** The link goes down: every connection is dropped and new ones are refused. */
  async cut(): Promise<void> {
    this.dropConnections()
    const server = this.server
    this.server = undefined
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /**
   * The link gets slow, for connections open now and later alike. Those open now are dropped first
   * (as a link that changes under them would), so that every request after this goes at its pace.
   */
  async slow(link: SlowLink): Promise<void> {
    this.dropConnections()
    this.link = link
    if (!this.server) await this.listen()
  }

  /** A plain, fast pipe again, listening on the same port. */
  async restore(): Promise<void> {
    this.dropConnections()
    this.link = undefined
    if (!this.server) await this.listen()
  }

  async close(): Promise<void> {
    this.closed = true
    await this.cut()
  }

  private dropConnections(): void {
    for (const lane of this.lanes) lane.close()
    this.lanes.clear()
    for (const socket of this.sockets) {
      if (!socket.destroyed) this.counts.dropped++
      socket.destroy()
    }
    this.sockets.clear()
  }

  private accept(socket: net.Socket): void {
    this.counts.connections++
    const upstream = net.connect(this.target.port, this.target.host)
    for (const s of [socket, upstream]) {
      this.sockets.add(s)
      s.on('error', () => s.destroy())
      s.once('close', () => this.sockets.delete(s))
    }
    // An end that fails takes the other with it (the cloud down behind a working link: a reset);
    // one that ends cleanly is ended on the other side once the data queued for it is through.
    socket.once('close', (hadError) => hadError && upstream.destroy())
    upstream.once('close', (hadError) => hadError && socket.destroy())
    const shaping = () => this.link
    const written = (bytes: number) => {
      this.counts.bytes += bytes
      if (this.link) this.counts.slowBytes += bytes
    }
    const lanes = [
      new Lane(socket, upstream, shaping, this.random, written),
      new Lane(upstream, socket, shaping, this.random, written),
    ]
    for (const lane of lanes) this.lanes.add(lane)
    socket.once('close', () => {
      for (const lane of lanes) {
        lane.close()
        this.lanes.delete(lane)
      }
    })
  }
}
