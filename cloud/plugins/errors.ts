import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { PROBLEM_CONTENT_TYPE } from '../../shared/problem.js'
import { AppError, toProblem } from '../app-error.js'
import { isTransactionConflict } from '../db/transaction-conflict.js'
import { fieldLocation, toFieldErrors } from '../validation.js'

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

/** Maps any error to the AppError it is for a client, or undefined for a server fault. */
export function classify(err: FastifyError): AppError | undefined {
  if (err instanceof AppError) return err
  // A transaction that lost a deadlock or serialization race more often than the transaction runner
  // retries: nothing was stored, and the same request is likely to pass a moment later. 503 with
  // Retry-After (RFC 9110 §15.6.4, §10.2.3), not a 500: the request was fine.
  if (isTransactionConflict(err)) {
    return new AppError('service_unavailable', 'Concurrent changes collided with this request; try again.', {
      headers: { 'retry-after': '1' },
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
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    // Another client error from Fastify or a plugin: say what it was, never more.
    return new AppError('bad_request', err.message, { status: err.statusCode })
  }
  return undefined
}

/**
 * Fastify's router answers a malformed URL or an over-long path parameter before any hook runs,
 * with its own JSON. This hands them to us instead (Fastify option `frameworkErrors`), so they are
 * problems too, with a request id and without echoing the URL back.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id)
  const error =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('uri_too_long', 'A path parameter is longer than any id or code.')
      : new AppError('bad_request', 'The URL is not valid (check its percent-encoding).')
  sendProblem(reply, request, error)
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers)
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(error, request.id)))
}

/**
 * One error handler for the whole app (DESIGN.md §7): every failure is an RFC 9457 problem with a
 * stable code. A 5xx says nothing internal; its details go to the log under the request id.
 */
const errorsPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = classify(err)
    if (appError) {
      if (appError.status >= 500) request.log.error({ err }, 'request failed')
      return sendProblem(reply, request, appError)
    }
    request.log.error({ err }, 'request failed')
    return sendProblem(
      reply,
      request,
      new AppError(
        'internal_error',
        'Something went wrong on our side. Quote the instance when you contact support.',
      ),
    )
  })

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      request,
      new AppError(
        'not_found',
        `There is no ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}.`,
      ),
    ),
  )
}

export default fp(errorsPlugin, { name: 'hajri-errors' })
