import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { PROBLEM_CONTENT_TYPE } from '../../shared/problem.js'
import { AppError, toProblem } from '../app-error.js'
import { classify } from '../http/classify.js'
import { type HttpProblem, httpProblem } from '../http/http-problem.js'

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
  sendProblem(reply, request, httpProblem(error))
}

/** Answers a problem: the status and headers the HTTP layer mapped it to, and the RFC 9457 body. */
function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: HttpProblem): FastifyReply {
  reply.headers(problem.headers)
  return reply
    .code(problem.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(problem.error, request.id, problem.status)))
}

/**
 * One error handler for the whole app (docs/development/architecture.md#errors): every failure is an RFC 9457
 * problem with a stable code. A 5xx says nothing internal; its details go to the log under the request id.
 */
const errorsPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const problem = classify(err)
    if (problem) {
      if (problem.status >= 500) request.log.error({ err }, 'request failed')
      return sendProblem(reply, request, problem)
    }
    request.log.error({ err }, 'request failed')
    return sendProblem(
      reply,
      request,
      httpProblem(
        new AppError(
          'internal_error',
          'Something went wrong on our side. Quote the instance when you contact support.',
        ),
      ),
    )
  })

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      request,
      httpProblem(
        new AppError(
          'not_found',
          `There is no ${request.method} ${(request.url.split('?')[0] ?? '').slice(0, 200)}.`,
        ),
      ),
    ),
  )
}

export default fp(errorsPlugin, { name: 'hajri-errors' })
