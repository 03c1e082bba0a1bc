import type { AppError } from '../app-error.js'

/**
 * An authentication failure with the WWW-Authenticate challenge its answer carries (RFC 9110 §11.6.1,
 * RFC 6750 §3). The challenge is HTTP's, so it travels beside the domain error, never in it
 * (docs/development/architecture.md#errors); the error handlers unwrap it (http/classify.ts).
 */
export class ChallengeError extends Error {
  constructor(
    readonly error: AppError,
    readonly challenge: string,
  ) {
    super(error.message)
    this.name = 'ChallengeError'
  }
}
