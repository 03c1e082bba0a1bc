import type { FastifyRequest } from 'fastify'
import type { Actor } from './actor.js'

/** Who acted through the public API, for the audit log: `api_key:<id>` or `oauth_token:<id>`, and the caller's address. */
export function publicActor(request: FastifyRequest): Actor {
  const { kind, id } = request.auth.credential
  return { name: `${kind}:${id}`, ip: request.ip }
}
