import type { Got, Response } from 'got'
import type { Logger } from 'pino'
import { RetryableError } from './retryable-error.js'

/** Refresh this long before expiry, so a token never runs out mid-request. */
const REFRESH_MARGIN_MS = 5 * 60_000

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 wants each half of Basic credentials. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}

/**
 * OAuth client credentials (RFC 6749 §4.4) for the agent: one access token, cached, refreshed
 * before it expires and once more when the cloud says it is no longer good. Concurrent callers
 * share one refresh.
 */
export class TokenClient {
  private current: { token: string; refreshAt: number } | undefined
  private refreshing: Promise<string> | undefined

  constructor(
    private readonly deps: {
      http: Got
      clientId: string
      clientSecret: string
      scope: string
      log: Logger
      now?: () => number
    },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now()
  }

  /** `signal` gives up waiting (on stop); the shared request itself goes on for other callers. */
  async token(signal?: AbortSignal): Promise<string> {
    if (this.current && this.now() < this.current.refreshAt) return this.current.token
    this.refreshing ??= this.fetch().finally(() => {
      this.refreshing = undefined
    })
    if (!signal) return this.refreshing
    signal.throwIfAborted()
    // The forwarder passes one signal for its whole life: the listener must go once this wait is
    // over, or every token fetched (hourly, and every retry in an outage) would leave one behind.
    let onAbort = () => {}
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new RetryableError('stopping'))
      signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      return await Promise.race([this.refreshing, aborted])
    } finally {
      signal.removeEventListener('abort', onAbort)
    }
  }

  /** Forgets the token (the cloud refused it): the next call gets a new one. */
  invalidate(token: string): void {
    if (this.current?.token === token) this.current = undefined
  }

  private async fetch(): Promise<string> {
    const basic = Buffer.from(
      `${formEncode(this.deps.clientId)}:${formEncode(this.deps.clientSecret)}`,
    ).toString('base64')
    let response: Response<string>
    try {
      response = await this.deps.http.post('api/oauth/token', {
        headers: { authorization: `Basic ${basic}` },
        form: { grant_type: 'client_credentials', scope: this.deps.scope },
      })
    } catch (err) {
      throw new RetryableError(`token request failed: ${(err as Error).message}`, undefined, 'unreachable')
    }
    const body = parseJson(response.body)
    if (
      response.statusCode === 200 &&
      typeof body?.access_token === 'string' &&
      typeof body.expires_in === 'number'
    ) {
      const lifetime = body.expires_in * 1000
      this.current = {
        token: body.access_token,
        refreshAt: this.now() + Math.max(lifetime / 2, lifetime - REFRESH_MARGIN_MS),
      }
      this.deps.log.debug({ expiresIn: body.expires_in, scope: body.scope }, 'access token obtained')
      return body.access_token
    }
    // invalid_client and friends are for an operator to fix; keep retrying (slowly) meanwhile.
    const reason =
      typeof body?.error === 'string'
        ? `${body.error}: ${String(body.error_description ?? '')}`
        : `HTTP ${response.statusCode}`
    // A 5xx without Retry-After is an outage the health probe may see end (uplink/health-probe.ts).
    const outage = response.statusCode >= 500 && response.headers['retry-after'] === undefined
    throw new RetryableError(`the cloud refused a token (${reason})`, undefined, outage ? 'failing' : 'other')
  }
}

export function parseJson(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined
  try {
    const value = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
