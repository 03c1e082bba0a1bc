import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Logger } from 'pino'
import { parseListenAddress } from '../../config/listen-address.js'

/** What a handler answers: always text/plain, as terminals expect. */
export interface AdmsResponse {
  status: number
  body: string
  headers?: Record<string, string>
}

/** A request body larger than the limit: 413, and the terminal keeps its records. */
export class BodyTooLargeError extends Error {
  readonly status = 413
  constructor(limit: number) {
    super(`the request body is larger than ${limit} bytes`)
    this.name = 'BodyTooLargeError'
  }
}

interface AdmsListenerOptions {
  listen: string
  maxConnections: number
  maxBodyBytes: number
  /** Whether a peer may connect at all (adms.allowFrom); refused connections are closed unanswered. */
  allows: (address: string) => boolean
  handle: (request: IncomingMessage, body: () => Promise<Buffer>) => Promise<AdmsResponse>
  /** A peer refused at connect (not allowed), or a request that was not HTTP. */
  onRefused: (reason: 'address' | 'bad_http', address: string) => void
  log: Logger
}

/**
 * Limits on what a peer can make the listener hold: a request's head must arrive within
 * HEAD_TIMEOUT_MS (node also caps it at 16 KiB) and the whole request within REQUEST_TIMEOUT_MS,
 * which is ample for a terminal's largest upload over a slow LAN and short enough that a peer that
 * trickles bytes (slowloris) is cut off.
 */
const HEAD_TIMEOUT_MS = 20_000
const REQUEST_TIMEOUT_MS = 60_000
/** Terminals open a connection per request (`Connection: close`); an idle kept-alive one goes soon. */
const KEEP_ALIVE_MS = 5_000
/** How long stop() lets requests in flight finish (their punches becoming durable) before cutting them. */
const STOP_GRACE_MS = 5_000

/**
 * The HTTP/1.1 listener ADMS terminals push to (node:http: a terminal's requests are small and
 * simple, and a framework would only add cost on the path every punch takes). It enforces the
 * limits that hold whatever the request: connections, the address allowlist, time, and body size
 * (read only when the handler asks, so a refused request's body is never buffered).
 */
export class AdmsListener {
  private server: http.Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly inFlight = new Set<Promise<void>>()

  constructor(private readonly options: AdmsListenerOptions) {}

  address(): AddressInfo | undefined {
    const address = this.server?.address()
    return address && typeof address === 'object' ? address : undefined
  }

  async start(): Promise<void> {
    const listen = parseListenAddress(this.options.listen, { anyPort: true })
    if (!listen) throw new Error(`adms.listen "${this.options.listen}" is not host:port`)
    const server = http.createServer({
      requestTimeout: REQUEST_TIMEOUT_MS,
      headersTimeout: HEAD_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_MS,
    })
    server.maxConnections = this.options.maxConnections
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? ''
      if (!this.options.allows(address)) {
        this.options.onRefused('address', address)
        socket.destroy()
        return
      }
      this.sockets.add(socket)
      socket.once('close', () => this.sockets.delete(socket))
    })
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const done = this.serve(request, response).finally(() => this.inFlight.delete(done))
      this.inFlight.add(done)
    })
    // Not HTTP (a port scanner, a terminal speaking the binary 4370 protocol to the wrong port):
    // answered 400 when the socket can still take it, and counted; the listener carries on.
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      this.options.onRefused('bad_http', socket.remoteAddress ?? '')
      this.options.log.debug({ err, address: socket.remoteAddress }, 'not an HTTP request')
      if (socket.writable && err.code !== 'ECONNRESET') {
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n')
      } else socket.destroy()
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(listen.port, listen.host, () => {
        server.off('error', reject)
        resolve()
      })
    })
    server.on('error', (err) => this.options.log.error({ err }, 'ADMS listener error'))
    this.server = server
  }

  /**
   * Stops taking connections, lets requests in flight finish (an upload being stored gets its
   * `OK`), then closes what is left. A request cut off here was not answered `OK`, so its terminal
   * sends it again.
   */
  async stop(): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = undefined
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeIdleConnections()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([...this.inFlight]),
      new Promise((resolve) => {
        timer = setTimeout(resolve, STOP_GRACE_MS)
      }),
    ])
    clearTimeout(timer)
    for (const socket of this.sockets) socket.destroy()
    await closed
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let consumed = false
    const body = () => {
      consumed = true
      return readBody(request, this.options.maxBodyBytes)
    }
    let answer: AdmsResponse
    try {
      answer = await this.options.handle(request, body)
    } catch (err) {
      if (err instanceof BodyTooLargeError) answer = { status: 413, body: err.message }
      else {
        this.options.log.error({ err }, 'ADMS request failed')
        // Not OK: the terminal keeps the records and tries again after ErrorDelay.
        answer = { status: 503, body: 'the agent could not take this request now' }
      }
    }
    if (response.destroyed) return
    const headers: Record<string, string | number> = {
      'Content-Type': 'text/plain',
      'Content-Length': Buffer.byteLength(answer.body),
      ...answer.headers,
    }
    // A body left unread (a refused request) cannot be skipped on a kept-alive connection: close it.
    const hasBody =
      request.headers['transfer-encoding'] !== undefined ||
      (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0')
    if (hasBody && (!consumed || !request.complete)) headers.Connection = 'close'
    response.writeHead(answer.status, headers)
    response.end(answer.body)
  }
}

/** The request body, refused once it passes `limit` (by its Content-Length, or as it arrives). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'])
  if (declared > limit) return Promise.reject(new BodyTooLargeError(limit))
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        request.off('data', onData)
        request.pause()
        reject(new BodyTooLargeError(limit))
        return
      }
      chunks.push(chunk)
    }
    request.on('data', onData)
    request.once('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)),
    )
    request.once('error', reject)
    request.once('close', () => {
      if (!request.complete) reject(new Error('the connection closed before the request was whole'))
    })
  })
}
