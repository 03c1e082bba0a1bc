import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../app-error.js'
import type { ConsoleContext } from '../auth/console-context.js'
import { bindRequestLog } from '../http/bind-request-log.js'
import { ChallengeError, REALM } from '../http/challenge-error.js'
import {
  type ConsoleOrigin,
  requireSession,
  SESSION_COOKIE,
  type SessionVerifier,
} from '../http/session-guard.js'
import { bearerToken, unknownCredential } from './bearer-token.js'

/** What a console route does: reads, or changes something (which a viewer may not;
 * docs/decisions/0050-console-roles.md).
 */
export type ConsoleAccess = 'read' | 'write'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Every console API route (under `/api/console/v1`) declares it. */
    access?: ConsoleAccess
    /**
     * The console's own session routes (/api/console/v1/session...), which take the cookie only:
     * `sign-in` needs nothing, `signed-in` a session, even one that must change its password.
     */
    consoleSession?: 'sign-in' | 'signed-in'
  }
  interface FastifyRequest {
    /** The authenticated administrator. Set on every console route before its handler runs. */
    console: ConsoleContext
  }
}

export interface ConsoleAuthenticator {
  authenticate(token: string, ip: string | null): Promise<ConsoleContext | undefined>
}

export interface ConsoleAuthOptions {
  /** Admin tokens, for scripts. */
  authenticator: ConsoleAuthenticator
  /** Console sessions, for people in a browser. */
  sessions: SessionVerifier<{ context: ConsoleContext }>
  origin: ConsoleOrigin
}

/**
 * Authenticates every route of the console API, onRequest, and checks that the caller may
 * do what the route does. A route that declares no access fails at startup.
 *
 * Two kinds of caller (docs/decisions/0047-admin-tokens-and-sessions.md). Scripts send an admin token; like
 * the public API's keys, tokens are refused from browser code (an Origin header). People send the session
 * cookie from the console, so those requests are checked for CSRF instead (http/session-guard.ts). A request
 * that carries both is taken as a script's: the Authorization header decides, and the cookie is not looked
 * at. A browser cannot be made to add that header to a cross-site request, and one sent with an Origin is
 * refused, so the cookie can never be used without its CSRF check.
 */
const consoleAuthPlugin: FastifyPluginAsync<ConsoleAuthOptions> = async (
  app,
  { authenticator, sessions, origin },
) => {
  app.decorateRequest('console', null as unknown as ConsoleContext)

  app.addHook('onRoute', (route) => {
    if (route.config?.access === undefined) {
      throw new Error(`console route ${route.method} ${route.url} declares no access (config.access)`)
    }
  })

  app.addHook('onRequest', async (request, reply) => {
    let context: ConsoleContext
    if (request.headers.authorization === undefined && request.cookies[SESSION_COOKIE] === undefined) {
      throw new ChallengeError(
        new AppError(
          'authentication_required',
          'Sign in to the console (POST /api/console/v1/session), or send Authorization: Bearer <admin token>.',
        ),
        REALM,
      )
    }
    if (request.headers.authorization !== undefined) {
      if (request.headers.origin !== undefined) {
        throw new AppError(
          'browser_origin_forbidden',
          'Admin tokens are for scripts and servers. Never put one in browser code.',
        )
      }
      const found = await authenticator.authenticate(bearerToken(request, 'admin token'), request.ip)
      if (!found) throw unknownCredential()
      context = found
    } else {
      context = (await requireSession(request, reply, { sessions, origin, challenge: REALM })).context
      if (context.user?.mustChangePassword) {
        throw new AppError(
          'password_change_required',
          'Choose a new password first: POST /api/console/v1/session/password.',
        )
      }
    }
    request.console = context
    request.log = bindRequestLog(request.log, { tenantId: context.tenant.id, actor: context.actor.name })
    if (request.routeOptions.config.access !== 'read' && context.role === 'viewer') {
      throw new AppError('insufficient_role', 'A viewer can read but not change anything.')
    }
  })
}

export default fp(consoleAuthPlugin, { name: 'hajri-console-auth' })
