/** Retry delays: exponential with full jitter, over a floor so there is never a tight loop. */
export interface BackoffOptions {
  /** The first delay's ceiling. */
  baseMs: number
  /** The ceiling's ceiling. */
  capMs: number
  /** Every delay is at least this. */
  floorMs: number
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, capMs: 5 * 60_000, floorMs: 250 }

/** A server may ask for a longer wait than our backoff would choose, but not for more than this. */
const MAX_HINT_MS = 3_600_000

/**
 * "Full jitter" (AWS Architecture Blog, Exponential Backoff and Jitter): a random delay up to a
 * ceiling that doubles per attempt, so agents that lost the cloud together do not all come back at
 * the same instant. The server's own hint (Retry-After, RateLimit-Reset) wins when it is longer.
 */
export function retryDelay(
  attempt: number,
  options: BackoffOptions,
  hintMs = 0,
  random = Math.random,
): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.min(attempt, 30))
  return Math.max(options.floorMs + Math.floor(random() * ceiling), Math.min(hintMs, MAX_HINT_MS))
}

/**
 * The wait a 429 or 503 asks for, in ms: Retry-After (seconds or an HTTP date, RFC 9110 §10.2.3),
 * else RateLimit-Reset (seconds, IETF draft); undefined if neither says.
 */
export function serverHintMs(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const first = (name: string) => {
    const value = headers[name]
    return Array.isArray(value) ? value[0] : value
  }
  const retryAfter = first('retry-after')
  if (retryAfter !== undefined) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter) * 1000
    // An HTTP-date names its weekday and month (RFC 9110 §5.6.7); Date.parse would also take "1.5".
    const at = /[A-Za-z]{3}/.test(retryAfter) ? Date.parse(retryAfter) : Number.NaN
    if (!Number.isNaN(at)) return Math.max(0, at - now)
  }
  const reset = first('ratelimit-reset')
  if (reset !== undefined && /^\d+$/.test(reset.trim())) return Number(reset) * 1000
  return undefined
}

/** Sleeps, unless the signal aborts first (then resolves early). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
