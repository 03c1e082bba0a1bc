/**
 * A small ADMS (iclock PUSH) server for the device model's tests, written here from the protocol
 * and not the agent's: a misunderstanding shared by the two would otherwise pass unseen. It
 * records every request, answers the handshake with options a test sets, acknowledges uploads
 * `OK: n` unless told to fail them, and hands out the commands a test queues. Not a test file.
 */
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SeenRequest {
  method: string
  /** /iclock/cdata, /iclock/getrequest... */
  path: string
  query: URLSearchParams
  /** The query as sent, before decoding. */
  rawQuery: string
  headers: IncomingHttpHeaders
  body: string
}

/**
 * How an upload is answered: acknowledged (`ok`: `OK: n`; `ok-compact`: `OK:n`), or one of the
 * failures a device must take as "not delivered": a 503, a bare `OK`, a count short by one, a
 * dropped connection, no reply at all.
 */
export type UploadReply = 'ok' | 'ok-compact' | '503' | 'bare-ok' | 'wrong-count' | 'drop' | 'hang'

/** The handshake options a test starts from: short delays, everything uploaded, India's zone. */
export const DEFAULT_OPTIONS: Readonly<Record<string, string>> = {
  ATTLOGStamp: 'None',
  OPERLOGStamp: '9999',
  ATTPHOTOStamp: 'None',
  ErrorDelay: '1',
  Delay: '10',
  TransTimes: '00:00;14:05',
  TransInterval: '1',
  TransFlag: 'TransData AttLog\tOpLog\tAttPhoto\tEnrollUser\tChgUser',
  TimeZone: '330',
  Realtime: '1',
  Encrypt: 'None',
}

export class AdmsTestServer {
  readonly requests: SeenRequest[] = []
  /** The handshake reply's `key=value` lines. */
  options: Record<string, string> = { ...DEFAULT_OPTIONS }
  /** The handshake reply's Date header; Node's own when undefined. */
  date: string | undefined
  handshakeStatus = 200
  handshakeBody: string | undefined
  /** Replies to the next uploads, in order; then `uploadDefault`. */
  uploadReplies: UploadReply[] = []
  uploadDefault: UploadReply = 'ok'
  /** Replies to the next polls (`C:<id>:<command>` lines), in order; then `OK`. */
  commandReplies: string[] = []
  /** The highest Stamp of an acknowledged upload. */
  acknowledgedStamp: string | undefined
  /** Called with each request before it is answered. */
  onRequest: ((request: SeenRequest) => void) | undefined

  private server: http.Server | undefined
  private readonly listeners = new Set<() => void>()

  async start(): Promise<string> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://device.test')
        const seen: SeenRequest = {
          method: req.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          rawQuery: (req.url ?? '').split('?')[1] ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }
        this.requests.push(seen)
        this.onRequest?.(seen)
        this.answer(seen, res)
        for (const listener of this.listeners) listener()
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
    this.server = server
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  async close(): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Resolves with the first request (from `from` on) that `match` accepts, once it has come. */
  next(match: (r: SeenRequest) => boolean, from = 0): Promise<SeenRequest> {
    return new Promise((resolve) => {
      const check = () => {
        const found = this.requests.slice(from).find(match)
        if (!found) return false
        this.listeners.delete(listener)
        resolve(found)
        return true
      }
      const listener = () => {
        check()
      }
      if (!check()) this.listeners.add(listener)
    })
  }

  /** Resolves once `count` requests match. */
  async count(match: (r: SeenRequest) => boolean, count: number): Promise<SeenRequest[]> {
    await new Promise<void>((resolve) => {
      const listener = () => {
        if (this.requests.filter(match).length < count) return
        this.listeners.delete(listener)
        resolve()
      }
      this.listeners.add(listener)
      listener()
    })
    return this.requests.filter(match)
  }

  /** ATTLOG uploads so far: their Stamp and lines. */
  uploads(): { stamp: string; lines: string[] }[] {
    return this.requests.filter(isUpload).map((r) => ({
      stamp: r.query.get('Stamp') ?? '',
      lines: r.body.split(/\r?\n/).filter((line) => line !== ''),
    }))
  }

  private answer(seen: SeenRequest, res: ServerResponse): void {
    if (isHandshake(seen) && this.date !== undefined) res.setHeader('Date', this.date)
    const reply = this.reply(seen)
    if (reply === 'drop') res.socket?.destroy()
    else if (reply !== 'hang') {
      res.writeHead(reply.status, { 'Content-Type': 'text/plain' })
      res.end(reply.body)
    }
  }

  private reply(seen: SeenRequest): { status: number; body: string } | 'drop' | 'hang' {
    if (isHandshake(seen)) {
      if (this.handshakeStatus !== 200)
        return { status: this.handshakeStatus, body: this.handshakeBody ?? 'Forbidden' }
      const lines = [`GET OPTION FROM: ${seen.query.get('SN')}`]
      for (const [key, value] of Object.entries(this.options)) lines.push(`${key}=${value}`)
      return { status: 200, body: this.handshakeBody ?? `${lines.join('\n')}\n` }
    }
    if (isUpload(seen)) {
      const n = seen.body.split(/\r?\n/).filter((line) => line !== '').length
      const reply = this.uploadReplies.shift() ?? this.uploadDefault
      if (reply === 'drop' || reply === 'hang') return reply
      if (reply === '503') return { status: 503, body: 'Service Unavailable' }
      if (reply === 'bare-ok') return { status: 200, body: 'OK' }
      if (reply === 'wrong-count') return { status: 200, body: `OK: ${n - 1}` }
      this.acknowledgedStamp = seen.query.get('Stamp') ?? undefined
      return { status: 200, body: reply === 'ok-compact' ? `OK:${n}` : `OK: ${n}` }
    }
    if (isPoll(seen)) return { status: 200, body: this.commandReplies.shift() ?? 'OK' }
    if (isResult(seen) || isPing(seen)) return { status: 200, body: 'OK' }
    return { status: 404, body: 'Not Found' }
  }
}

export const isHandshake = (r: SeenRequest) => r.method === 'GET' && r.path === '/iclock/cdata'
export const isUpload = (r: SeenRequest) =>
  r.method === 'POST' && r.path === '/iclock/cdata' && r.query.get('table') === 'ATTLOG'
export const isPoll = (r: SeenRequest) => r.path === '/iclock/getrequest'
export const isResult = (r: SeenRequest) => r.path === '/iclock/devicecmd'
export const isPing = (r: SeenRequest) => r.path === '/iclock/ping'
