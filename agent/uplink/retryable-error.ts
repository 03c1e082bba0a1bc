/** A failure worth retrying later: the network, the cloud being down or busy, a token refused. */
export class RetryableError extends Error {
  constructor(
    message: string,
    /** What the server asked us to wait, in ms. */
    readonly hintMs?: number,
    /**
     * Why: `unreachable` (no answer: refused, reset, timed out), `failing` (a 5xx with no wait asked
     * for), or `other` (a 429 or Retry-After, a token refused, an answer we cannot read). Only the
     * first two may have their backoff cut short by the health probe (uplink/health-probe.ts).
     */
    readonly kind: 'unreachable' | 'failing' | 'other' = 'other',
  ) {
    super(message)
    this.name = 'RetryableError'
  }
}
