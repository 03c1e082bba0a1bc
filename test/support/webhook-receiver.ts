import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'

/** One request the receiver got, as it got it. */
export interface ReceivedWebhook {
  at: number
  path: string
  headers: IncomingHttpHeaders
  body: string
  /** The secrets (of those the receiver was given) whose signature verified, by the standardwebhooks package. */
  verifiedWith: string[]
  /** The parsed body, when it was JSON. */
  json: { type: string; timestamp: string; data: Record<string, unknown> } | undefined
}

/** How to answer one request: a status, headers, a body, after a delay (or never, `hang`). */
export interface Answer {
  status?: number
  headers?: Record<string, string>
  /** Bytes as they are, or text sent as UTF-8. */
  body?: string | Buffer
  delayMs?: number
  /** Never answer: the sender's timeout must end it. */
  hang?: boolean
}

type Responder = (request: ReceivedWebhook, index: number) => Answer

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests: it records
 * every request, checks each signature with the standardwebhooks package against the secrets it is
 * given, and answers as the test says (a status, a Retry-After, a redirect, a hang).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = []
  /** TCP connections accepted, whether or not a request came over them: a refused connect never counts. */
  connections = 0
  private server: Server | undefined
  private responder: Responder = () => ({ status: 204 })
  private secrets: string[] = []
  /** Per path, over the defaults: tests that run at once each answer and verify on their own path. */
  private readonly pathResponders = new Map<string, Responder>()
  private readonly pathSecrets = new Map<string, string[]>()
  private readonly hanging = new Set<ServerResponse>()
  private waiters: { predicate: () => boolean; resolve: () => void }[] = []

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        const path = req.url ?? '/'
        const secrets = this.pathSecrets.get(path) ?? this.secrets
        const received: ReceivedWebhook = {
          at: Date.now(),
          path,
          headers: req.headers,
          body,
          verifiedWith: secrets.filter((secret) => verifies(secret, body, req.headers)),
          json: parseJson(body),
        }
        const index = this.received.push(received) - 1
        const answer = (this.pathResponders.get(path) ?? this.responder)(received, index)
        this.notify()
        if (answer.hang) {
          this.hanging.add(res)
          res.on('close', () => this.hanging.delete(res))
          return
        }
        const send = () => {
          res.writeHead(answer.status ?? 204, answer.headers ?? {})
          res.end(answer.body ?? '')
        }
        if (answer.delayMs) setTimeout(send, answer.delayMs)
        else send()
      })
    })
    this.server.on('connection', () => {
      this.connections++
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    return this
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | null | undefined
    if (!address) throw new Error('the webhook receiver is not listening')
    return address.port
  }

  /** A URL on this receiver; the path tells endpoints apart. */
  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`
  }

  /** Secrets to check signatures against (verifiedWith lists those that verified). */
  verifyWith(...secrets: string[]): void {
    this.secrets = secrets
  }

  /** How to answer from now on. */
  respond(responder: Responder | Answer): void {
    this.responder = typeof responder === 'function' ? responder : () => responder
  }

  /** How to answer requests to one path, from now on; `index` counts that path's requests from 0. */
  respondAt(path: string, responder: Responder | Answer): void {
    this.pathResponders.set(
      path,
      typeof responder === 'function'
        ? (request) => responder(request, this.to(path).length - 1)
        : () => responder,
    )
  }

  /** Secrets to check the signatures of requests to one path against. */
  verifyAt(path: string, ...secrets: string[]): void {
    this.pathSecrets.set(path, secrets)
  }

  /** Requests to one path. */
  to(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path)
  }

  /** Resolves when `predicate` holds (checked on each request), or rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'webhook requests'): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done)
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what} (got ${this.received.length})`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      this.waiters.push({ predicate, resolve: done })
    })
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy()
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }

  private notify(): void {
    const ready = this.waiters.filter((w) => w.predicate())
    this.waiters = this.waiters.filter((w) => !ready.includes(w))
    for (const w of ready) w.resolve()
  }
}

function verifies(secret: string, body: string, headers: IncomingHttpHeaders): boolean {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

function parseJson(body: string): ReceivedWebhook['json'] {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}
