/**
 * A round-robin HTTP reverse proxy for tests (two cloud instances behind one address).
 * It stands for the load balancer of deploy/compose.yaml: every request, not every connection, goes
 * to the next upstream in turn, so one keep-alive client (the agent) is spread over every instance
 * and a token issued by one is used on the other. Method, path, headers and body are forwarded as
 * they came, with X-Forwarded-For/-Proto added as a proxy does (the cloud reads them with
 * HAJRI_TRUST_PROXY). It counts what each upstream served, so a test can show both did.
 */
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Upstream {
  host: string
  port: number
}

/** One request as the proxy passed it on. */
export interface ProxiedRequest {
  method: string
  /** The path without its query. */
  path: string
  /** Index into the upstreams. */
  upstream: number
  /** The upstream's status, or 502 when it could not be reached. */
  status: number
}

// RFC 9110 §7.6.1: hop-by-hop fields are for one connection and are not forwarded.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase()),
  )
  const out: OutgoingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) out[name] = value
  }
  return out
}

export class RoundRobinProxy {
  private server: Server | undefined
  private readonly agent = new Agent({ keepAlive: true })
  private next = 0
  port = 0
  readonly requests: ProxiedRequest[] = []

  constructor(private readonly upstreams: readonly Upstream[]) {
    if (upstreams.length === 0) throw new Error('RoundRobinProxy needs at least one upstream')
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Requests each upstream was given (in the order of the upstreams), of those `which` selects. */
  served(which: (r: ProxiedRequest) => boolean = () => true): number[] {
    const counts = this.upstreams.map(() => 0)
    for (const r of this.requests) if (which(r)) counts[r.upstream] = (counts[r.upstream] ?? 0) + 1
    return counts
  }

  async listen(port = 0): Promise<void> {
    const server = createServer((req, res) => this.forward(req, res))
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

  async close(): Promise<void> {
    const server = this.server
    this.server = undefined
    server?.closeAllConnections()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
    this.agent.destroy()
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const index = this.next++ % this.upstreams.length
    const target = this.upstreams[index] as Upstream
    const record: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0] as string,
      upstream: index,
      status: 0,
    }
    this.requests.push(record)
    const headers = endToEnd(req.headers)
    // The client's address appended to any list a proxy before this one started.
    const client = req.socket.remoteAddress ?? 'unknown'
    const forwardedFor = req.headers['x-forwarded-for']
    headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${client}` : client
    headers['x-forwarded-proto'] = 'http'
    const upstream = httpRequest(
      { host: target.host, port: target.port, method: req.method, path: req.url, headers, agent: this.agent },
      (answer) => {
        record.status = answer.statusCode ?? 0
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers))
        answer.pipe(res)
        answer.on('error', () => res.destroy())
      },
    )
    upstream.on('error', (err) => {
      if (res.headersSent) {
        res.destroy()
        return
      }
      record.status = 502
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`round-robin proxy: upstream ${target.host}:${target.port} failed: ${err.message}`)
    })
    // A client that goes away takes its upstream request with it.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy()
    })
    req.pipe(upstream)
  }
}
