import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

/**
 * One access-log line a request, written when it completes: the request (method, URL with secret
 * parameters censored, addresses), its status and its time, under the request's id and the tenant
 * and credential the request bound. Fastify's default writes a second line as each request arrives,
 * which at `info` doubled what logging cost a busy punch endpoint; the completion line says all the
 * first did. A request that errors is logged at `error` as before; the other events are Fastify's.
 */
export class AccessLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      )
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }
}
