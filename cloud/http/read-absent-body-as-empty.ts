import type { FastifyRequest } from 'fastify'

/**
 * preValidation for a route whose body may be left out: Fastify validates an absent body as `undefined`,
 * which no object schema accepts, so an absent body is read as an empty one (and its defaults apply).
 */
export async function readAbsentBodyAsEmpty(request: FastifyRequest): Promise<void> {
  request.body ??= {}
}
