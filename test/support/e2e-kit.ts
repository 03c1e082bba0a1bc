/**
 * What the end-to-end durability tests share (docs/decisions/0024-ack-after-fsync.md): free ports,
 * a seeded random source (so a failing run can be told apart and replayed by its seed), polling
 * that gives up with a message, the agent's GET /status, and a TCP proxy that stands for the network
 * between the agent and the cloud, so a cloud outage can be made without stopping the cloud.
 */
import net, { type AddressInfo } from 'node:net'
import type { AgentStatus } from '../../agent/status/agent-status.js'

/**
 * A port nothing listens on right now, for a listener the agent opens again after every kill. It is
 * taken below every system's ephemeral range (Linux 32768–60999, macOS and Windows 49152–65535):
 * there, the source port of some outgoing connection made while the agent was down could hold it,
 * and the restarted agent would fail to listen.
 */
export async function freePort(random: () => number = Math.random): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = 20_000 + Math.floor(random() * 12_000)
    const server = net.createServer()
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(port, '127.0.0.1', () => resolve(true))
    })
    if (free) {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      return port
    }
    if (attempt > 100) throw new Error('no free port found between 20000 and 32000')
  }
}

/** mulberry32: small, fast and good enough to choose kill moments; the same seed, the same choices. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Polls until `condition` gives a truthy value and returns it. Deadlines are generous: these tests
 * wait on conditions, never on fixed sleeps, and never assert on timing
 * (docs/decisions/0032-speed-is-benchmarked.md).
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  what: string,
  options: { timeoutMs?: number; intervalMs?: number; describe?: () => unknown } = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 60_000
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await condition()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) {
      const state = options.describe ? `; last state: ${JSON.stringify(options.describe())}` : ''
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`)
    }
    await sleep(options.intervalMs ?? 50)
  }
}

/** The agent's GET /status, or undefined while nothing answers on its port (starting, killed). */
export async function agentStatus(port: number): Promise<AgentStatus | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(3000) })
    return response.ok ? ((await response.json()) as AgentStatus) : undefined
  } catch {
    return undefined
  }
}

/**
 * A TCP proxy in front of the cloud. `cut('refuse')` closes the listener and every connection
 * (the cloud's host is down: connections are refused); `cut('blackhole')` keeps accepting but never
 * answers (a dead link: only the agent's request timeout notices). Cutting drops requests in flight
 * too, so some punches are stored by the cloud while their answer is lost: the retry after it must
 * not make a duplicate. `restore()` listens again on the same port.
 */
export class TcpProxy {
  private server: net.Server | undefined
  private readonly sockets = new Set<net.Socket>()
  private mode: 'up' | 'blackhole' = 'up'
  private closed = false
  port = 0
  /** Connections accepted while up, and while black-holed. */
  readonly connections = { forwarded: 0, blackholed: 0 }

  constructor(private readonly target: { host: string; port: number }) {}

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

  async cut(how: 'refuse' | 'blackhole'): Promise<void> {
    this.dropConnections()
    if (how === 'blackhole') {
      this.mode = 'blackhole'
      if (!this.server) await this.listen()
      return
    }
    const server = this.server
    this.server = undefined
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async restore(): Promise<void> {
    this.dropConnections()
    this.mode = 'up'
    if (!this.server) await this.listen()
  }

  async close(): Promise<void> {
    this.closed = true
    await this.cut('refuse')
  }

  private dropConnections(): void {
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket)
    socket.once('close', () => this.sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    if (this.mode === 'blackhole') {
      this.connections.blackholed++
      return
    }
    this.connections.forwarded++
    const upstream = net.connect(this.target.port, this.target.host)
    this.sockets.add(upstream)
    upstream.once('close', () => {
      this.sockets.delete(upstream)
      socket.destroy()
    })
    upstream.on('error', () => upstream.destroy())
    socket.once('close', () => upstream.destroy())
    socket.pipe(upstream)
    upstream.pipe(socket)
  }
}

/** Counts, one per line, in the CI log (the durability tests report what they saw, not only pass/fail). */
export function printTable(title: string, counts: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(counts).map((k) => k.length))
  const lines = Object.entries(counts).map(([k, v]) => `  ${k.padEnd(width)}  ${String(v)}`)
  // biome-ignore lint/suspicious/noConsole: the counts are meant for the CI log
  console.log(`${title}\n${lines.join('\n')}`)
}

/** The promise, or a rejection saying what was waited for once `ms` have passed. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
