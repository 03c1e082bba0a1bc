import type { FastifyRequest } from 'fastify'
import { AppError } from '../app-error.js'
import { ChallengeError, REALM } from '../http/challenge-error.js'

// RFC 6750 §2.1: the scheme is case-insensitive; token68 characters only.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** The bearer token of a request, or a 401 problem with the challenge RFC 6750 asks for. */
export function bearerToken(request: FastifyRequest, what: string): string {
  const header = request.headers.authorization
  if (header === undefined || header === '') {
    throw new ChallengeError(
      new AppError('authentication_required', `Send Authorization: Bearer <${what}>.`),
      REALM,
    )
  }
  const m = BEARER.exec(header)
  if (!m?.[1]) {
    throw new ChallengeError(
      new AppError('invalid_credential', 'The Authorization header must be "Bearer <token>".'),
      `${REALM}, error="invalid_request"`,
    )
  }
  return m[1]
}

/** The 401 for a well-formed token that is unknown, expired or revoked. */
export function unknownCredential(): ChallengeError {
  return new ChallengeError(
    new AppError('invalid_credential', 'The credential is unknown, expired or revoked.'),
    `${REALM}, error="invalid_token"`,
  )
}
