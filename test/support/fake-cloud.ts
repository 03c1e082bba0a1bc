/**
 * The cloud as the agent sees it, played by a plain HTTP server that a test scripts: the OAuth
 * token endpoint (client credentials, RFC 6749 §4.4) and the punch endpoints, one punch or a batch.
 * It records every request, answers each with the next scripted answer or a default (a token
 * `tok-N`; every punch accepted), and can hold answers back until the test releases them, to
 * catch requests in flight or to let a backlog drain at the test's pace. For the real cloud in
 * this process, see `cloud-harness.ts`.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { batchAnswer } from './batch-answer.js'

export const TOKEN_PATH = '/api/oauth/token'
export const PUNCH_PATH = '/api/public/v1/attendance/punches'
export const BATCH_PATH = '/api/public/v1/attendance/punches/batch'

/** A request the fake cloud received. */
export interface SeenRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
  /** The body read as JSON; undefined when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are inspected freely.
  json: any
  /** The body read as a form (the token request's encoding, RFC 6749 §4.4.2). */
  form: URLSearchParams
}

export type Answer = (request: SeenRequest, res: ServerResponse) => void

/** Writes `body` as JSON; an error status as a problem (RFC 9457). */
export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const type = status >= 400 ? 'application/problem+json' : 'application/json'
  res.writeHead(status, { 'content-type': type, ...headers }).end(JSON.stringify(body))
}

/** A problem as hajri-cloud writes it. */
export function problem(status: number, code: string, detail: string) {
  return { type: `https://hajri.example.com/problems/${code}`, title: code, status, code, detail }
}

/** Every punch accepted: 201 for one, 200 with each one created for a batch. */
export const acceptPunches: Answer = (request, res) => {
  if (request.url === BATCH_PATH) {
    const punches = (request.json?.punches ?? []) as unknown[]
    send(res, 200, batchAnswer(punches.map((_, index) => ({ index, status: 'created' }))))
  } else send(res, 201, {})
}

export class FakeCloud {
  readonly seen: SeenRequest[] = []
  /** Answers for the next punch requests, one each, in order; then `punchAnswer`. */
  answers: Answer[] = []
  /** How punch requests are answered once `answers` is used up. */
  punchAnswer: Answer = acceptPunches
  /** Answers for the next token requests, one each, in order; then a token `tok-N` for the Nth request. */
  tokenAnswers: Answer[] = []
  /** The lifetime of the tokens it issues. */
  expiresIn = 3600
  /** While set, token answers wait in `held` until the test releases them. */
  holdTokens = false
  /** While set, punch answers wait in `held` until the test releases them. */
  holdPunches = false
  readonly held: (() => void)[] = []
  url = ''
  private server: Server | undefined

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(body)
        } catch {
          json = undefined
        }
        const seen: SeenRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          body,
          json,
          form: new URLSearchParams(body),
        }
        this.seen.push(seen)
        const isToken = seen.url === TOKEN_PATH
        const answer = isToken
          ? (this.tokenAnswers.shift() ?? this.issueToken(this.tokenRequests().length))
          : (this.answers.shift() ?? this.punchAnswer)
        if (isToken ? this.holdTokens : this.holdPunches) this.held.push(() => answer(seen, res))
        else answer(seen, res)
      })
    })
    const server = this.server
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  /** Back to the defaults between tests: nothing seen, scripted or held. */
  reset(): void {
    this.seen.length = 0
    this.answers = []
    this.punchAnswer = acceptPunches
    this.tokenAnswers = []
    this.expiresIn = 3600
    this.holdTokens = false
    this.holdPunches = false
    this.held.length = 0
  }

  /** The token requests, in order. */
  tokenRequests(): SeenRequest[] {
    return this.seen.filter((s) => s.url === TOKEN_PATH)
  }

  /** The punch requests, without the token requests. */
  punchRequests(): SeenRequest[] {
    return this.seen.filter((s) => s.url !== TOKEN_PATH)
  }

  /** Waits until an answer is held, and sends it. */
  async releaseOne(): Promise<void> {
    while (this.held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    this.held.shift()?.()
  }

  /** Sends what is held, and closes every connection. */
  async stop(): Promise<void> {
    this.holdTokens = false
    this.holdPunches = false
    for (const answer of this.held.splice(0)) answer()
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }

  private issueToken(n: number): Answer {
    return (_request, res) =>
      send(res, 200, {
        access_token: `tok-${n}`,
        token_type: 'Bearer',
        expires_in: this.expiresIn,
        scope: 'attendance:write',
      })
  }
}
