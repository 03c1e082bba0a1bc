/**
 * What test/system/cloud/fuzz.test.ts needs for the console's session routes (/api/console/v1/session...,
 * docs/decisions/0045-console-sessions.md), which take a cookie rather than an Authorization header: users to
 * sign in as, sessions and their CSRF tokens, and requests that carry them, mostly right and sometimes wrong.
 * Each route gets users of its own, so that one route's successes (a sign-out, a password change, which ends
 * the user's other sessions) leave the next with something to work on. Each request comes from an
 * address of its own, as the sign-in limits are per address.
 */
import fc from 'fast-check'
import { hashPassword } from '../../../../cloud/features/users/password.js'
import type { RouteRecord } from '../../../../cloud/plugins/route-table.js'
import { TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import {
  type FuzzContext,
  type FuzzRequest,
  type OpenApiOperation,
  requestArbitrary,
} from '../../../support/request-arbitrary.js'
import { CONSOLE, SESSION_COOKIE } from './session-kit.js'

export const isSessionRoute = (route: { url: string }): boolean => route.url.startsWith(`${CONSOLE}/session`)

export interface SessionFuzzFixtures {
  /** Session secrets and passwords: no response may echo one. */
  secrets: string[]
  /** Requests to one of the session routes, built on the generic generator's. */
  requests(
    route: RouteRecord,
    operation: OpenApiOperation | undefined,
    base: FuzzContext,
  ): fc.Arbitrary<FuzzRequest>
}

interface Session {
  cookie: string
  csrfToken: string
}

/** Users of a tenant of their own, all with `password`, and `sessions` sessions each. */
async function usersWithSessions(
  cloud: TestCloud,
  tenantId: string,
  what: string,
  count: number,
  sessions: number,
  password: string,
  passwordHash: string,
) {
  const emails: string[] = []
  const opened: Session[] = []
  for (let i = 0; i < count; i++) {
    const email = `${what}-${i}-${tenantId.toLowerCase()}@example.test`
    const { user } = await cloud.services.consoleUsers.invite(
      tenantId,
      { email, role: 'admin' },
      { role: 'owner', actor: TEST_ACTOR },
    )
    // As after their first sign-in: a password of their own, nothing left to change.
    await cloud.database.db
      .updateTable('console_users')
      .set({ password_hash: passwordHash, must_change_password: 0 })
      .where('id', '=', user.id)
      .execute()
    emails.push(email)
    for (let j = 0; j < sessions; j++) {
      const { secret, session } = await cloud.services.consoleSessions.signIn({ email, password }, null)
      opened.push({ cookie: secret, csrfToken: session.csrfToken })
    }
  }
  return { emails, sessions: opened }
}

const address = fc
  .tuple(fc.integer({ min: 1, max: 254 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 }))
  .map(([a, b, c]) => `10.${a}.${b}.${c}`)

export async function setUpSessionFuzz(cloud: TestCloud): Promise<SessionFuzzFixtures> {
  const tenantId = await cloud.createTenant()
  const password = 'the fuzzing password 7c1e'
  const hash = await hashPassword(password)
  const signIn = await usersWithSessions(cloud, tenantId, 'sign-in', 20, 0, password, hash)
  const reader = await usersWithSessions(cloud, tenantId, 'reader', 1, 3, password, hash)
  const leaver = await usersWithSessions(cloud, tenantId, 'leaver', 1, 40, password, hash)
  const changer = await usersWithSessions(cloud, tenantId, 'changer', 10, 1, password, hash)
  const stranger = await usersWithSessions(
    cloud,
    await cloud.createTenant(),
    'stranger',
    1,
    1,
    password,
    hash,
  )
  const all = [reader, leaver, changer, stranger].flatMap((u) => u.sessions)

  /** The cookie and CSRF token a request carries: mostly its own session's, else wrong in some way. */
  const credentials = (pool: Session[]) => {
    const session = fc.constantFrom(...pool)
    const wrongCookie = fc.constantFrom<string | undefined>(
      undefined,
      '',
      'hjw_',
      `hjw_${'A'.repeat(46)}`,
      'not a session',
      `${pool[0]?.cookie}x`,
      ...(stranger.sessions[0] ? [stranger.sessions[0].cookie] : []),
    )
    const wrongCsrf = fc.constantFrom<string | undefined>(
      undefined,
      '',
      'x',
      ...all.map((s) => s.csrfToken).slice(0, 3),
    )
    return fc.oneof(
      {
        weight: 8,
        arbitrary: session.map((s) => ({
          cookie: s.cookie as string | undefined,
          csrf: s.csrfToken as string | undefined,
        })),
      },
      {
        weight: 1,
        arbitrary: fc.record({ cookie: session.map((s) => s.cookie as string | undefined), csrf: wrongCsrf }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          cookie: wrongCookie,
          csrf: session.map((s) => s.csrfToken as string | undefined),
        }),
      },
    )
  }
  const poolFor = (route: RouteRecord): Session[] =>
    route.method === 'DELETE'
      ? leaver.sessions
      : route.url.endsWith('/password')
        ? changer.sessions
        : reader.sessions

  return {
    secrets: [password, ...all.map((s) => s.cookie)],
    requests(route, operation, base) {
      // A browser sends no Authorization header; now and then a script's mistake does.
      const context: FuzzContext = {
        ...base,
        authorization: fc.oneof(
          { weight: 9, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: base.authorization },
        ),
        hints: {
          ...base.hints,
          email: fc.oneof(
            { weight: 8, arbitrary: fc.constantFrom(...signIn.emails) },
            { weight: 1, arbitrary: fc.constantFrom(...signIn.emails.map((e) => ` ${e.toUpperCase()}`)) },
            { weight: 1, arbitrary: fc.constantFrom('nobody@example.test', 'not-an-email', '') },
          ),
          password: fc.oneof(
            { weight: 8, arbitrary: fc.constant(password) },
            { weight: 2, arbitrary: fc.string() },
          ),
          currentPassword: fc.oneof(
            { weight: 8, arbitrary: fc.constant(password) },
            { weight: 2, arbitrary: fc.string() },
          ),
          newPassword: fc.oneof(
            { weight: 6, arbitrary: fc.string({ minLength: 12, maxLength: 40 }) },
            { weight: 1, arbitrary: fc.constantFrom(password, 'short') },
          ),
        },
      }
      const requests = requestArbitrary(route, operation, context)
      const signingIn = route.method === 'POST' && route.url === `${CONSOLE}/session`
      const origin = fc.oneof(
        { weight: 8, arbitrary: fc.constant<string | undefined>(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('http://localhost', 'https://evil.example', 'null') },
      )
      return fc
        .record({
          request: requests,
          credentials: signingIn
            ? fc.constant({ cookie: undefined, csrf: undefined })
            : credentials(poolFor(route)),
          origin,
          remoteAddress: address,
        })
        .map(({ request, credentials, origin, remoteAddress }) => {
          const headers = { ...request.headers }
          if (credentials.cookie !== undefined) headers.cookie = `${SESSION_COOKIE}=${credentials.cookie}`
          if (credentials.csrf !== undefined) headers['x-csrf-token'] = credentials.csrf
          if (origin !== undefined) headers.origin = origin
          // app.inject takes the address along; fast-check prints the request as the generator did.
          const out: FuzzRequest & { remoteAddress: string } = { ...request, headers, remoteAddress }
          const shown = (request as unknown as Record<symbol, (() => string) | undefined>)[fc.toStringMethod]
          Object.defineProperty(out, fc.toStringMethod, {
            value: () =>
              `${shown ? shown() : fc.stringify(request)} from ${remoteAddress} with ${fc.stringify(headers)}`,
          })
          return out
        })
    },
  }
}
