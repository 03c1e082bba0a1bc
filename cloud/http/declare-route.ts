import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static, TSchema } from '@sinclair/typebox'
import type {
  FastifyContextConfig,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  preValidationAsyncHookHandler,
} from 'fastify'

/** The instance a route plugin gets, with TypeBox schemas. */
export type RouteHost = Parameters<FastifyPluginAsyncTypebox>[0]

/** A request as a declared route's handler sees it: its params, query, body and headers as their schemas say. */
export type DeclaredRequest<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  H extends TSchema = TSchema,
> = FastifyRequest<{
  Params: Static<P>
  Querystring: Static<Q>
  Body: Static<B>
  Headers: Static<H>
}>

/**
 * One documented route of the public or the console API: how it is reached and who may call it,
 * how the OpenAPI document describes it, what it reads, the one success it answers, and what it does.
 */
export interface RouteDeclaration<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  H extends TSchema,
  R extends TSchema,
> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'
  url: string
  /** Who may call it: a public route's `scope`, a console API route's `access`. */
  config: FastifyContextConfig
  tags: string[]
  summary: string
  description?: string
  params?: P
  querystring?: Q
  headers?: H
  body?: B
  preValidation?: preValidationAsyncHookHandler
  /** The status of a success, 200 unless said: documented with `response`, and the one sent. */
  status?: 200 | 201 | 202 | 204
  response: R
  /** Answers the body of a success; it may set headers on `reply`, never its status. */
  handle(request: DeclaredRequest<P, Q, B, H>, reply: FastifyReply): Promise<Static<R>>
}

/**
 * Registers a route from its declaration. The status a route documents and the status it sends are
 * written once, so they cannot drift apart (docs/development/architecture.md#public-api-rules).
 */
export function declareRoute<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  H extends TSchema = TSchema,
  R extends TSchema = TSchema,
>(app: RouteHost, route: RouteDeclaration<P, Q, B, H, R>): void {
  const { method, url, config, preValidation, status = 200, response, handle, ...documented } = route
  const schema: FastifySchema = { ...documented, response: { [status]: response } }
  app.route({
    method,
    url,
    config,
    ...(preValidation === undefined ? {} : { preValidation }),
    schema,
    handler: async (request, reply) => {
      const answer = await handle(request as DeclaredRequest<P, Q, B, H>, reply)
      return reply.code(status).send(answer)
    },
  })
}
