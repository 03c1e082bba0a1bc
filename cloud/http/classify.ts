import type { FastifyError } from 'fastify'
import { AppError } from '../app-error.js'
import { isTransactionConflict } from '../db/transaction-conflict.js'
import { fieldLocation, toFieldErrors } from '../validation.js'
import { ChallengeError } from './challenge-error.js'
import { type HttpProblem, httpProblem } from './http-problem.js'

// Fastify's own client errors, by code, and the problem each becomes.
const FASTIFY_ERRORS: Record<string, (err: FastifyError) => AppError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError('payload_too_large'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new AppError('malformed_json', 'The Content-Type is application/json but the body is empty.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('malformed_json', 'The body is not valid JSON.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError('bad_request', 'Content-Length does not match the body.'),
}

/** Maps any error to the problem it is for a client, or undefined for a server fault. */
export function classify(err: FastifyError): HttpProblem | undefined {
  if (err instanceof ChallengeError) return httpProblem(err.error, { challenge: err.challenge })
  if (err instanceof AppError) return httpProblem(err)
  const error = clientError(err)
  if (error) return httpProblem(error)
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    // Another client error from Fastify or a plugin: say what it was, never more, under its own status.
    return httpProblem(new AppError('bad_request', err.message), { status: err.statusCode })
  }
  return undefined
}

/** The client errors that have a code of their own, from Fastify and the database. */
function clientError(err: FastifyError): AppError | undefined {
  // A transaction that lost a deadlock or serialization race more often than the transaction runner
  // retries: nothing was stored, and the same request is likely to pass a moment later. 503 with
  // Retry-After (RFC 9110 §15.6.4, §10.2.3), not a 500: the request was fine.
  if (isTransactionConflict(err)) {
    return new AppError('service_unavailable', 'Concurrent changes collided with this request; try again.', {
      retryAfterSeconds: 1,
    })
  }
  if (err.validation) {
    const location = fieldLocation(err.validationContext)
    return new AppError('validation_failed', 'One or more fields are not valid; see errors.', {
      errors: toFieldErrors(err.validation as Parameters<typeof toFieldErrors>[0], location),
    })
  }
  const known = err.code ? FASTIFY_ERRORS[err.code] : undefined
  if (known) return known(err)
  // JSON.parse's SyntaxError, as raised by Fastify's body parser.
  if (err instanceof SyntaxError && err.statusCode === 400)
    return new AppError('malformed_json', 'The body is not valid JSON.')
  return undefined
}
