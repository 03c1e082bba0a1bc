import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  ConsoleUserInviteSchema,
  ConsoleUserListQuerySchema,
  ConsoleUserPageSchema,
  ConsoleUserParamsSchema,
  InvitedConsoleUserSchema,
} from '../../../shared/console-auth.js'
import { declareRoute } from '../../http/declare-route.js'
import type { ConsoleUserService } from './service.js'

const TAGS = ['Console users']

/**
 * A tenant's console users, under /api/console/v1: owners and admins invite and remove them
 * (docs/decisions/0050-console-roles.md).
 */
export const consoleUserRoutes: FastifyPluginAsyncTypebox<{ users: ConsoleUserService }> = async (
  app,
  { users },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/users',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List console users',
    querystring: ConsoleUserListQuerySchema,
    response: ConsoleUserPageSchema,
    handle: (request) => users.list(request.console.tenant.id, request.query),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/users',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Invite a console user',
    description:
      'Answers a one-time password, shown once, to pass on to the user: they must choose their own at the ' +
      'first sign-in. Only an owner may invite an owner.',
    body: ConsoleUserInviteSchema,
    status: 201,
    response: InvitedConsoleUserSchema,
    handle: async (request, reply) => {
      const invited = await users.invite(request.console.tenant.id, request.body, request.console)
      // The one-time password must not stay in any cache.
      reply.header('cache-control', 'no-store')
      return invited
    },
  })

  declareRoute(app, {
    method: 'DELETE',
    url: '/users/:userId',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Remove a console user',
    description:
      'Their sessions end at once. Only an owner may remove an owner, and never the last one (409 `last_owner`).',
    params: ConsoleUserParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await users.remove(request.console.tenant.id, request.params.userId, request.console)
      return null
    },
  })
}
