import { randomBytes } from 'node:crypto'
import { StringDecoder } from 'node:string_decoder'
import got from 'got'
import { Webhook } from 'standardwebhooks'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../settings/webhook-settings.js'
import { attemptError } from './attempt-error.js'
import type { WebhookUrlPolicy } from './url-policy.js'

/** What one attempt came to. */
export interface AttemptResult {
  /** The HTTP status, or null when there was no answer (refused, timed out, blocked). */
  status: number | null
  durationMs: number
  /** The first KiB of the answer. */
  body: string | null
  /** Why there was no answer, as the attempt log keeps it for the tenant's admins (attempt-error.ts). */
  error: string | null
  /** The error in full, for the operator's log only: it may name internal hosts and addresses. */
  errorDetail?: string
  /** A 429 or 503's Retry-After, in ms. */
  retryAfterMs: number | undefined
}

/** Kept of an answer: enough to see what a receiver said, never a whole page. */
const KEPT_BODY_BYTES = 1024

/**
 * The log's text of an answer's first KiB: whole characters only (a StringDecoder holds back one cut
 * at the end, which would otherwise become a replacement character and overrun the KiB), and no NUL,
 * which a PostgreSQL text column refuses: the attempt would then never be logged, and its delivery
 * would be sent again at every lease, for ever.
 */
function keptAnswer(bytes: Buffer): string {
  return new StringDecoder('utf8').write(bytes.subarray(0, KEPT_BODY_BYTES)).replaceAll('\u0000', '\uFFFD')
}

/** A new signing secret: Standard Webhooks' `whsec_` and 24 random bytes in base64. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

/**
 * Standard Webhooks v1 signature header (docs/decisions/0019-standard-webhooks-signatures.md): `v1,<base64
 * HMAC-SHA256 of id.timestamp.body>`, one per live secret, space-separated, so a receiver holding either the
 * old or the new secret verifies while a rotation is in its grace period. Signed by the standardwebhooks
 * package itself, so what we send is what its verify() checks.
 */
function signatureHeader(secrets: readonly string[], messageId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' ')
}

function retryAfterMs(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (text === undefined) return undefined
  if (/^\d+$/.test(text.trim())) return Number(text) * 1000
  const at = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * One delivery attempt: a signed POST through the SSRF-filtering agents, with a timeout, no
 * redirects (a 3xx is an answer, not a success), and only the first KiB of the answer read.
 */
export class WebhookSender {
  constructor(
    private readonly deps: {
      policy: WebhookUrlPolicy
      timeoutSeconds: number
      connectTimeoutSeconds?: number
    },
  ) {}

  async send(
    url: string,
    messageId: string,
    body: string,
    secrets: readonly string[],
    signal?: AbortSignal,
  ): Promise<AttemptResult> {
    const started = performance.now()
    const at = new Date()
    const target = new URL(url)
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'hajri-webhooks/1',
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader(secrets, messageId, at, body),
    }
    return new Promise<AttemptResult>((resolve) => {
      let status: number | null = null
      let retryAfter: number | undefined
      const chunks: Buffer[] = []
      let kept = 0
      let settled = false
      const finish = (error: { recorded: string; detail: string } | null) => {
        if (settled) return
        settled = true
        const text = kept > 0 ? keptAnswer(Buffer.concat(chunks)) : null
        resolve({
          status,
          durationMs: Math.round(performance.now() - started),
          body: text,
          error: error?.recorded ?? null,
          ...(error ? { errorDetail: error.detail } : {}),
          retryAfterMs: retryAfter,
        })
      }
      // Looking the receiver up and connecting are bounded on their own, shorter than the attempt: a
      // receiver that drops connection attempts holds a slot for seconds, not the whole timeout.
      const connect =
        (this.deps.connectTimeoutSeconds ?? DEFAULT_WEBHOOK_SETTINGS.connectTimeoutSeconds) * 1000
      const stream = got.stream.post(target, {
        body,
        headers,
        agent: this.deps.policy.agentsFor(target),
        timeout: {
          lookup: connect,
          connect,
          secureConnect: connect,
          request: this.deps.timeoutSeconds * 1000,
        },
        followRedirect: false,
        throwHttpErrors: false,
        retry: { limit: 0 },
        ...(signal ? { signal } : {}),
      })
      stream.on(
        'response',
        (response: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
          status = response.statusCode
          retryAfter = retryAfterMs(response.headers['retry-after'], Date.now())
        },
      )
      stream.on('data', (chunk: Buffer) => {
        if (kept < KEPT_BODY_BYTES) {
          chunks.push(chunk)
          kept += chunk.length
        }
        if (kept >= KEPT_BODY_BYTES) {
          finish(null)
          stream.destroy()
        }
      })
      stream.on('end', () => finish(null))
      stream.on('error', (err: Error & { code?: string }) => {
        // An error after the status line (a cut body) still leaves the status as the answer.
        finish(status === null ? attemptError(err) : null)
      })
    })
  }
}
