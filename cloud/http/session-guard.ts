import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../app-error.js'
import { ChallengeError } from './challenge-error.js'

/**
 * The session cookie (docs/decisions/0045-console-sessions.md). Not `__Host-`: that prefix needs https, and a
 * local console runs over http.
 */
export const SESSION_COOKIE = 'hajri_session'

/** The header a signed-in browser echoes its session's CSRF token in (OWASP synchronizer token pattern). */
const CSRF_HEADER = 'x-csrf-token'

/**
 * RFC 9110 §11.6.1: a 401 carries a challenge the resource accepts. HTTP has no standard scheme for a
 * form-and-cookie sign-in; this is the one proposed for it in draft-broyer-http-cookie-auth, which
 * names where to sign in. Browsers ignore schemes they do not know (no password dialog).
 */
export const COOKIE_CHALLENGE = `Cookie realm="hajri", form-action="/api/console/v1/session", cookie-name="${SESSION_COOKIE}"`

// RFC 9110 §9.2.1: these change nothing, so they need no CSRF token.
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** Where the console is served from, as a browser sees it. */
export interface ConsoleOrigin {
  /** `scheme://host[:port]` of this server, to compare with a request's Origin header. */
  of(request: FastifyRequest): string
  /** Whether the browser reached us over https, so the cookie must be `Secure`. */
  isHttps(request: FastifyRequest): boolean
}

function serialized(url: string): string | undefined {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * HAJRI_PUBLIC_URL, when set, is the origin: behind a proxy it is what the browser sees. Otherwise the
 * request's own scheme and host, as Fastify reports them (X-Forwarded-Proto and -Host with trustProxy).
 */
export function consoleOrigin(publicUrl: string | undefined): ConsoleOrigin {
  const fixed = publicUrl === undefined ? undefined : serialized(publicUrl)
  return {
    of: (request) => fixed ?? serialized(`${request.protocol}://${request.host}`) ?? '',
    isHttps: (request) => request.protocol === 'https' || fixed?.startsWith('https:') === true,
  }
}

/**
 * The cookie's attributes: HttpOnly, SameSite=Strict, and Secure when served over https
 * (docs/decisions/0045-console-sessions.md).
 */
export function sessionCookieOptions(request: FastifyRequest, origin: ConsoleOrigin): CookieSerializeOptions {
  return { path: '/', httpOnly: true, sameSite: 'strict', secure: origin.isHttps(request) }
}

/**
 * A cookie-authenticated request from a page of another origin is refused (403 `csrf_failed`),
 * whatever the method: a browser names the page's origin in `Origin` on every cross-origin request
 * and every POST (Fetch standard, "append a request Origin header"), and only a page can be tricked.
 */
export function assertSameOrigin(request: FastifyRequest, origin: ConsoleOrigin): void {
  const given = request.headers.origin
  if (given === undefined) return
  const expected = origin.of(request)
  if (expected === '' || serialized(given) !== expected) {
    throw new AppError(
      'csrf_failed',
      `Requests with a session must come from the console's own origin (${expected}).`,
    )
  }
}

/**
 * What the guard needs of the console's sessions: finding one by its cookie, and checking its CSRF
 * token. The console session service provides it; the guard stays below the features that use it.
 */
export interface SessionVerifier<Session> {
  authenticate(secret: string, ip: string | null): Promise<Session | undefined>
  csrfMatches(session: Session, presented: string | undefined): boolean
}

export interface SessionGuardOptions<Session> {
  sessions: SessionVerifier<Session>
  origin: ConsoleOrigin
  /** The WWW-Authenticate challenge of a 401: the cookie's, unless the route takes a bearer token too. */
  challenge?: string
}

/**
 * The request's session, from its cookie: or 401 (`authentication_required` without a cookie,
 * `session_expired` with one that no longer works, which is then cleared); 403 `csrf_failed` for a
 * foreign Origin, or for a state-changing request without its session's X-CSRF-Token.
 */
export async function requireSession<Session>(
  request: FastifyRequest,
  reply: FastifyReply,
  { sessions, origin, challenge = COOKIE_CHALLENGE }: SessionGuardOptions<Session>,
): Promise<Session> {
  assertSameOrigin(request, origin)
  const secret = request.cookies[SESSION_COOKIE]
  if (secret === undefined || secret === '') {
    throw new ChallengeError(
      new AppError('authentication_required', 'Sign in first: POST /api/console/v1/session.'),
      challenge,
    )
  }
  const session = await sessions.authenticate(secret, request.ip)
  if (!session) {
    reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(request, origin))
    throw new ChallengeError(
      new AppError('session_expired', 'The session has expired or was ended. Sign in again.'),
      challenge,
    )
  }
  if (!SAFE_METHODS.has(request.method)) {
    const token = request.headers[CSRF_HEADER]
    if (!sessions.csrfMatches(session, typeof token === 'string' ? token : undefined)) {
      throw new AppError(
        'csrf_failed',
        'Send the csrfToken of GET /api/console/v1/session in the X-CSRF-Token header with every change.',
      )
    }
  }
  return session
}
