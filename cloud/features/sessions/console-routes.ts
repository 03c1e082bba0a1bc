import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  ConsoleSessionSchema,
  PasswordChangeInputSchema,
  SignInInputSchema,
} from '../../../shared/console-auth.js'
import { problemStatus } from '../../../shared/problem.js'
import { AppError } from '../../app-error.js'
import { bindRequestLog } from '../../http/bind-request-log.js'
import { ChallengeError } from '../../http/challenge-error.js'
import { type RateLimitSettings, registerRateLimit } from '../../http/rate-limit.js'
import {
  assertSameOrigin,
  COOKIE_CHALLENGE,
  type ConsoleOrigin,
  requireSession,
  SESSION_COOKIE,
  sessionCookieOptions,
} from '../../http/session-guard.js'
import type { AuthenticatedSession, ConsoleSessionService } from './service.js'

const TAGS = ['Console session']

declare module 'fastify' {
  interface FastifyRequest {
    /** The session of a signed-in route under /api/console/v1/session. */
    consoleSession: AuthenticatedSession
  }
}

/**
 * Sign-in requests one address may make a minute, right or wrong: scrypt is costly by design, and
 * this keeps one client from spending the server's CPU on it. Wrong passwords also earn growing
 * delays for the email and the address (sign-in-throttle.ts), across instances.
 */
const SIGN_INS_PER_IP_PER_MINUTE = 30

// A session answer carries the CSRF token: no cache may keep it (RFC 9111 §5.2.2.5).
const NO_STORE = { 'cache-control': 'no-store' }

export interface ConsoleSessionRouteOptions {
  sessions: ConsoleSessionService
  origin: ConsoleOrigin
  rateLimit: RateLimitSettings
  signInsPerIpPerMinute?: number
}

/**
 * The browser's session with the console (docs/decisions/0045-console-sessions.md), under /api/console/v1:
 * sign in, see who is signed in, sign out, change the password. These take the session cookie only (never an
 * admin token), and answer a user who must change their password, which every other console route refuses.
 */
export const consoleSessionRoutes: FastifyPluginAsyncTypebox<ConsoleSessionRouteOptions> = async (
  app,
  options,
) => {
  const { sessions, origin } = options
  await registerRateLimit(app, options.rateLimit, { global: false, hook: 'onRequest' })
  app.decorateRequest('consoleSession', null as unknown as AuthenticatedSession)
  // Before the body is read, like every other authentication here: a stranger's body costs nothing.
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    request.consoleSession = await requireSession(request, reply, { sessions, origin })
    request.log = bindRequestLog(request.log, {
      tenantId: request.consoleSession.tenant.id,
      actor: request.consoleSession.context.actor.name,
    })
  }

  app.post(
    '/session',
    {
      config: {
        consoleSession: 'sign-in',
        rateLimit: {
          max: options.signInsPerIpPerMinute ?? SIGN_INS_PER_IP_PER_MINUTE,
          keyGenerator: (request) => `ip:${request.ip}`,
        },
      },
      schema: {
        tags: TAGS,
        summary: 'Sign in to the console',
        description:
          'Sets the `hajri_session` cookie (HttpOnly, SameSite=Strict, Secure over https). A wrong email and a wrong ' +
          'password get the same 401 `invalid_credentials`. After 3 failures for one email from one address (10 for ' +
          'the email from all the addresses that have failed for it, 50 for one address), each further attempt waits ' +
          'longer: 1 s, then doubling up to 15 minutes (429 `login_locked` with Retry-After). An address that has ' +
          'not failed for the email is never held back by other addresses. `tenantId` is needed only when the ' +
          'email is a user of several tenants with the same password.',
        body: SignInInputSchema,
        response: { 200: ConsoleSessionSchema },
      },
      // Login CSRF: a foreign page must not sign the browser in to an account of its choosing.
      onRequest: async (request) => assertSameOrigin(request, origin),
    },
    async (request, reply) => {
      reply.headers(NO_STORE)
      try {
        const { secret, session } = await sessions.signIn(
          request.body,
          request.ip,
          request.cookies[SESSION_COOKIE],
        )
        reply.setCookie(SESSION_COOKIE, secret, sessionCookieOptions(request, origin))
        request.log.info({ userId: session.user.id, tenantId: session.tenant.id }, 'console user signed in')
        return sessions.describe(session)
      } catch (err) {
        // The reason only: never the password, and not the email either (a typo of a password often lands there).
        if (err instanceof AppError) request.log.info({ code: err.code }, 'console sign-in refused')
        // RFC 9110 §11.6.1: a 401 names how to authenticate.
        if (err instanceof AppError && problemStatus(err.code) === 401)
          throw new ChallengeError(err, COOKIE_CHALLENGE)
        throw err
      }
    },
  )

  app.get(
    '/session',
    {
      config: { consoleSession: 'signed-in' },
      schema: {
        tags: TAGS,
        summary: 'The signed-in user, and the CSRF token',
        response: { 200: ConsoleSessionSchema },
      },
      onRequest: signedIn,
    },
    async (request, reply) => {
      reply.headers(NO_STORE)
      return sessions.describe(request.consoleSession)
    },
  )

  app.delete(
    '/session',
    {
      config: { consoleSession: 'signed-in' },
      schema: {
        tags: TAGS,
        summary: 'Sign out',
        description: 'Ends the session on the server and clears the cookie.',
        response: { 204: Type.Null() },
      },
      onRequest: signedIn,
    },
    async (request, reply) => {
      await sessions.signOut(request.consoleSession)
      reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request, origin))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/session/password',
    {
      config: { consoleSession: 'signed-in' },
      schema: {
        tags: TAGS,
        summary: 'Change your password',
        description:
          "Clears the first sign-in's must-change-password state and ends your other sessions. The new password " +
          'needs 12 characters after NFKC normalization, not all white space. Wrong current passwords are ' +
          'delayed like failed sign-ins.',
        body: PasswordChangeInputSchema,
        response: { 204: Type.Null() },
      },
      onRequest: signedIn,
    },
    async (request, reply) => {
      await sessions.changePassword(request.consoleSession, request.body)
      return reply.code(204).send(null)
    },
  )
}
