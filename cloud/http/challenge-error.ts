import { AppError } from '../app-error.js'

// RFC 6750 §3: the challenge names the realm; §3.1 adds error codes.
export const REALM = 'Bearer realm="hajri"'

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

/** The 403 for a credential without the scope `scope`, naming it in the challenge (RFC 6750 §3.1). */
export function insufficientScope(scope: string, detail = `This needs the scope ${scope}.`): ChallengeError {
  return new ChallengeError(
    new AppError('insufficient_scope', detail),
    `${REALM}, error="insufficient_scope", scope="${scope}"`,
  )
}
