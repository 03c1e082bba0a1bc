import http from 'node:http'
import https from 'node:https'
import { firstLine } from './adms-errors.js'

/**
 * What terminals send with every ADMS request. `Connection: close` and no connection pool: push
 * firmware opens a new TCP connection per request, so a server must not count on keep-alive.
 */
const DEVICE_HEADERS = {
  'User-Agent': 'iClock Proxy/1.09',
  Accept: '*/*',
  Connection: 'close',
} as const

/** A reply longer than this is no ADMS reply; the request fails rather than buffer it. */
const MAX_REPLY_BYTES = 1024 * 1024

interface AdmsHttpRequest {
  url: URL
  method: 'GET' | 'POST'
  /** POST only. */
  body?: string
  /** POST only; null sends no Content-Type, as some firmware does. */
  contentType?: string | null
  timeoutMs: number
  /** Aborts the request (stop, reboot). */
  signal: AbortSignal
}

interface AdmsHttpReply {
  status: number
  /** The Date header, which sets the device's clock on a handshake. */
  date: string | undefined
  body: string
}

/** No reply within the device's request timeout. */
class AdmsTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no reply within ${timeoutMs} ms`)
    this.name = 'AdmsTimeoutError'
  }
}

/**
 * One request as push firmware makes it: its own connection, closed when the reply has been read.
 * Settles only once that connection is closed, so a stopped device leaves no socket behind.
 */
function admsRequest(request: AdmsHttpRequest): Promise<AdmsHttpReply> {
  if (request.signal.aborted) return Promise.reject(new Error('aborted'))
  const headers: Record<string, string> = { ...DEVICE_HEADERS }
  let payload: Buffer | undefined
  if (request.method === 'POST') {
    payload = Buffer.from(request.body ?? '', 'utf8')
    headers['Content-Length'] = String(payload.length)
    if (request.contentType) headers['Content-Type'] = request.contentType
  }
  const client = request.url.protocol === 'https:' ? https : http
  return new Promise<AdmsHttpReply>((resolve, reject) => {
    let reply: AdmsHttpReply | undefined
    let failure: Error | undefined
    const req = client.request(request.url, { method: request.method, headers, agent: false })
    const fail = (err: Error) => {
      failure ??= err
      req.destroy()
    }
    const timer = setTimeout(() => fail(new AdmsTimeoutError(request.timeoutMs)), request.timeoutMs)
    const onAbort = () => fail(new Error('aborted'))
    request.signal.addEventListener('abort', onAbort, { once: true })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_REPLY_BYTES) fail(new Error(`a reply of more than ${MAX_REPLY_BYTES} bytes`))
        else chunks.push(chunk)
      })
      res.on('error', fail)
      res.on('end', () => {
        if (failure) return
        reply = {
          status: res.statusCode ?? 0,
          date: res.headers.date,
          body: Buffer.concat(chunks).toString('utf8'),
        }
        req.destroy()
      })
    })
    req.on('error', fail)
    // 'close' comes once the socket is closed, whatever happened before.
    req.on('close', () => {
      clearTimeout(timer)
      request.signal.removeEventListener('abort', onAbort)
      if (reply) resolve(reply)
      else reject(failure ?? new Error('the connection closed before a reply'))
    })
    req.end(payload)
  })
}

/** The four endpoints of Attendance PUSH, under /iclock/. */
type AdmsEndpoint = 'cdata' | 'getrequest' | 'devicecmd' | 'ping'

/** What came of a request: its reply, why there was none, or undefined when it was cut short. */
type AdmsExchange = { reply: AdmsHttpReply } | { problem: string } | undefined

interface AdmsHttpClientOptions {
  /** The server's base URL, such as http://192.168.1.10:8081. */
  url: string
  serialNumber: string
  /** Of POST bodies; null: none. */
  contentType: string | null
  timeoutMs: number
}

/** Query values as firmware encodes them: percent-encoded (a space is %20), commas left as they are. */
function encodeValue(value: string): string {
  return encodeURIComponent(value).replace(/%2C/g, ',')
}

/**
 * A device's requests to its server: `/iclock/<endpoint>?SN=<serial number>&...`, one at a time,
 * the one in flight cut short by interrupt() (a reboot) or close() (stop).
 */
export class AdmsHttpClient {
  readonly base: URL
  private inFlight: AbortController | undefined
  private closed = false

  constructor(private readonly options: AdmsHttpClientOptions) {
    const base = new URL(options.url)
    if (base.protocol !== 'http:' && base.protocol !== 'https:')
      throw new TypeError(`an ADMS server URL is http:// or https://, not ${options.url}`)
    if (!base.pathname.endsWith('/')) base.pathname += '/'
    base.search = ''
    base.hash = ''
    this.base = base
  }

  url(endpoint: AdmsEndpoint, params: Record<string, string>): URL {
    const query = Object.entries({ SN: this.options.serialNumber, ...params })
      .map(([key, value]) => `${key}=${encodeValue(value)}`)
      .join('&')
    return new URL(`iclock/${endpoint}?${query}`, this.base)
  }

  async exchange(
    method: 'GET' | 'POST',
    endpoint: AdmsEndpoint,
    params: Record<string, string>,
    body?: string,
  ): Promise<AdmsExchange> {
    if (this.closed) return undefined
    const controller = new AbortController()
    this.inFlight = controller
    try {
      const reply = await admsRequest({
        url: this.url(endpoint, params),
        method,
        body,
        contentType: this.options.contentType,
        timeoutMs: this.options.timeoutMs,
        signal: controller.signal,
      })
      return { reply }
    } catch (err) {
      if (controller.signal.aborted) return undefined
      return { problem: err instanceof Error ? err.message : String(err) }
    } finally {
      if (this.inFlight === controller) this.inFlight = undefined
    }
  }

  /** Cuts the request in flight short (it resolves undefined). */
  interrupt(): void {
    this.inFlight?.abort()
  }

  /** Cuts the request in flight short and makes no more. */
  close(): void {
    this.closed = true
    this.interrupt()
  }
}

/** Why a reply is no acknowledgement of `posted` records: HTTP 200 and `OK: n`, n = posted. */
export function acknowledgementProblem(reply: AdmsHttpReply, posted: number): string | undefined {
  if (reply.status !== 200) return `HTTP ${reply.status}${firstLine(reply.body)}`
  const m = /^OK:\s*(\d+)/.exec(reply.body.trim())
  if (!m) return `the reply ${JSON.stringify(reply.body.trim().slice(0, 60))} is not "OK: <count>"`
  if (Number(m[1]) !== posted) return `the reply acknowledges ${m[1]} of ${posted} records`
  return undefined
}

/** Why a reply is a failure (no reply, or a status other than 200), or undefined. */
export function replyProblem(exchange: Exclude<AdmsExchange, undefined>): string | undefined {
  if ('problem' in exchange) return exchange.problem
  if (exchange.reply.status !== 200) return `HTTP ${exchange.reply.status}${firstLine(exchange.reply.body)}`
  return undefined
}
