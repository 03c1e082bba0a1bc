/** A failure worth retrying later: the network, the cloud being down or busy, a token refused. */
export class RetryableError extends Error {
  constructor(
    message: string,
    /** What the server asked us to wait, in ms. */
    readonly hintMs?: number,
  ) {
    super(message)
    this.name = 'RetryableError'
  }
}
