import { randomBytes, timingSafeEqual } from 'node:crypto'
import type {
  ConsoleRole,
  ConsoleSession,
  PasswordChangeInput,
  SignInInput,
} from '../../../shared/console-auth.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { ConsoleContext } from '../../auth/console-context.js'
import { generateSecret, hashSecret, isWellFormedSecret, type SecretKind } from '../../auth/secret-format.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { SignInThrottle, type SignInThrottleStores } from '../sign-in-throttle/sign-in-throttle.js'
import { newPasswordProblem } from '../users/new-password-problem.js'
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from '../users/password.js'
import type { ConsoleUserStore } from '../users/store.js'
import { type ConsoleUserFields, consoleUserView, normalizeEmail } from '../users/user-view.js'
import type { ConsoleSessionStore, SessionWithUser } from './store.js'

/** `hjw_`: the console's session cookie. ≈ 238 bits, like the other bearer secrets. */
export const CONSOLE_SESSION: SecretKind = { prefix: 'hjw_', randomLength: 40 }

/**
 * How long a session lasts (docs/decisions/0045-console-sessions.md). The console mints credentials to a
 * tenant's data, and it is often opened on a shared office computer: a session ends after 2 hours without a
 * request, and 12 hours (a working day) after sign-in however busy (OWASP Session Management Cheat Sheet,
 * "Session Expiration").
 */
export const SESSION_IDLE_SECONDS = 2 * 3600
export const SESSION_LIFETIME_SECONDS = 12 * 3600

/**
 * Console users with one email a sign-in without a tenant tries, oldest first: a person works for a
 * few tenants, not many; beyond these, the sign-in names its tenant. They are checked concurrently
 * (scrypt runs on libuv's thread pool), so with cores to spare several take about as long as one.
 */
const MAX_ACCOUNTS_PER_SIGN_IN = 4

const SECOND_MICROS = 1_000_000
/** The idle clock is moved on at most once a minute: one write a minute, not one per request. */
const TOUCH_AFTER_MICROS = 60 * SECOND_MICROS

/** A request's valid session, with its user and tenant as they are now (a role change shows at once). */
export interface AuthenticatedSession {
  tokenHash: string
  csrfToken: string
  user: ConsoleUserFields
  tenant: { id: string; name: string; timeZone: string; backfillDays: number }
  context: ConsoleContext
}

function consoleUserActor(userId: string, ip: string | null): Actor {
  return { name: `console_user:${userId}`, ip }
}

function toAuthenticated(row: SessionWithUser, ip: string | null): AuthenticatedSession {
  const tenant = {
    id: row.tenant_id,
    name: row.tenant_name,
    timeZone: row.time_zone,
    backfillDays: row.backfill_days,
  }
  const user: ConsoleUserFields = {
    id: row.user_id,
    email: row.email,
    role: row.role,
    must_change_password: row.must_change_password,
    created_at: row.user_created_at,
    last_sign_in_at: row.last_sign_in_at,
  }
  return {
    tokenHash: row.token_hash,
    csrfToken: row.csrf_token,
    user,
    tenant,
    context: {
      tenant: { id: tenant.id, timeZone: tenant.timeZone, backfillDays: tenant.backfillDays },
      role: row.role as ConsoleRole,
      actor: consoleUserActor(row.user_id, ip),
      rateLimitKey: row.user_id,
      user: { id: row.user_id, email: row.email, mustChangePassword: row.must_change_password === 1 },
    },
  }
}

const invalid = (pointer: string, message: string) =>
  new AppError('validation_failed', 'One or more fields are not valid; see errors.', {
    errors: [{ in: 'body', pointer, message }],
  })

/** The stores console sign-in uses. */
export interface ConsoleSessionStores extends SignInThrottleStores {
  consoleSessions: ConsoleSessionStore
  consoleUsers: ConsoleUserStore
  audit: AuditStore
}

/**
 * Console sign-in (docs/decisions/0071-console-sign-in-delays.md): email and password in, an opaque session
 * out. The cookie carries the session's secret; the database keeps its SHA-256, so a copy of the database
 * signs no one in.
 */
export class ConsoleSessionService {
  private readonly throttle: SignInThrottle

  constructor(
    private readonly deps: {
      stores: UnitOfWork<ConsoleSessionStores>
      audit: AuditService
      now: () => number
    },
  ) {
    this.throttle = new SignInThrottle(deps)
  }

  /**
   * Checks the password and opens a session. An unknown email and a wrong password get the same
   * answer after the same work (one scrypt): neither says which emails exist. A session secret the
   * browser still held is ended, so a sign-in never carries an earlier session on (session fixation).
   *
   * An email is unique within a tenant only, so the same person may be a console user of several.
   * Without `tenantId`, the password is checked against each of them (at most a few, concurrently)
   * and picks the tenant; with it, only that tenant's user is looked at. Tenants never see each
   * other's users: the answer is the same whether or not another tenant has this email.
   */
  async signIn(
    input: SignInInput,
    ip: string | null,
    previousSecret?: string,
  ): Promise<{ secret: string; session: AuthenticatedSession }> {
    const email = normalizeEmail(input.email)
    // White space alone has a length (the schema takes it) but names no one once trimmed; counted,
    // it would share one throttle key, "email:", with every other blank attempt (found by
    // fuzzing what requests store).
    if (email === '') throw invalid('#/email', 'must not be blank')
    const attempt = { email, ip }
    const { delaySeconds } = await this.throttle.admit(attempt)
    const { stores, audit } = this.deps
    const candidates = await stores.read.consoleUsers.findForSignIn(email, {
      tenantId: input.tenantId,
      limit: MAX_ACCOUNTS_PER_SIGN_IN,
    })
    const checks = await Promise.all(
      (candidates.length > 0 ? candidates : [undefined]).map((u) =>
        verifyPassword(input.password, u?.password_hash ?? DUMMY_PASSWORD_HASH),
      ),
    )
    const user = candidates.find((_, i) => checks[i])
    if (!user) {
      await this.throttle.failed(attempt)
      // Only a user's own tenant hears of attempts on them; the password itself is never recorded.
      for (const candidate of candidates)
        await audit.record(
          stores.read.audit,
          candidate.tenant_id,
          { name: 'anonymous', ip },
          {
            action: 'console_user.sign_in_failed',
            target: { type: 'console_user', id: candidate.id },
            details: { email, retryAfterSeconds: delaySeconds },
          },
        )
      throw new AppError('invalid_credentials', 'The email or password is wrong.')
    }

    const now = this.deps.now()
    const secret = generateSecret(CONSOLE_SESSION)
    const tokenHash = hashSecret(secret)
    const csrfToken = randomBytes(32).toString('base64url')
    await stores.transaction(async (s) => {
      const sessions = s.consoleSessions
      if (previousSecret !== undefined && isWellFormedSecret(CONSOLE_SESSION, previousSecret))
        await sessions.delete(hashSecret(previousSecret))
      await sessions.insert({
        token_hash: tokenHash,
        tenant_id: user.tenant_id,
        user_id: user.id,
        csrf_token: csrfToken,
        ip,
        created_at: now,
        last_seen_at: now,
        expires_at: now + SESSION_LIFETIME_SECONDS * SECOND_MICROS,
      })
      await s.consoleUsers.setLastSignIn(user.tenant_id, user.id, now)
      await this.throttle.succeeded(attempt, s.signInThrottle)
      await audit.record(s.audit, user.tenant_id, consoleUserActor(user.id, ip), {
        action: 'console_user.signed_in',
        target: { type: 'console_user', id: user.id },
        details: { email },
      })
    })
    const session = await this.authenticate(secret, ip)
    if (!session) throw new Error('a session just opened was not found')
    return { secret, session }
  }

  /** The live session a cookie names, or undefined (unknown, ended, idle too long, or past its lifetime). */
  async authenticate(secret: string, ip: string | null): Promise<AuthenticatedSession | undefined> {
    if (!isWellFormedSecret(CONSOLE_SESSION, secret)) return undefined
    const tokenHash = hashSecret(secret)
    const store = this.deps.stores.read.consoleSessions
    const row = await store.findByHashForAuthentication(tokenHash)
    if (!row) return undefined
    const now = this.deps.now()
    if (row.expires_at <= now || row.last_seen_at + SESSION_IDLE_SECONDS * SECOND_MICROS <= now) {
      await store.delete(tokenHash)
      return undefined
    }
    if (now - row.last_seen_at >= TOUCH_AFTER_MICROS) await store.touch(tokenHash, now)
    return toAuthenticated(row, ip)
  }

  /** Whether a request's X-CSRF-Token is its session's (compared in constant time). */
  csrfMatches(session: AuthenticatedSession, presented: string | undefined): boolean {
    if (presented === undefined) return false
    const expected = Buffer.from(session.csrfToken)
    const given = Buffer.from(presented)
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /** The API's view of a session: who is signed in, to which tenant, and the CSRF token. */
  describe(session: AuthenticatedSession): ConsoleSession {
    return {
      user: consoleUserView(session.user),
      tenant: { id: session.tenant.id, name: session.tenant.name, timeZone: session.tenant.timeZone },
      csrfToken: session.csrfToken,
    }
  }

  /** Ends the session server-side: its cookie signs no one in again, even if replayed. */
  async signOut(session: AuthenticatedSession): Promise<void> {
    await this.deps.stores.transaction(async (s) => {
      if (await s.consoleSessions.delete(session.tokenHash)) {
        await this.deps.audit.record(s.audit, session.tenant.id, session.context.actor, {
          action: 'console_user.signed_out',
          target: { type: 'console_user', id: session.user.id },
        })
      }
    })
  }

  /**
   * Replaces the password, clears "must change password", and ends the user's other sessions (one may
   * be an attacker's who knew the old password). Guesses at the current password are delayed like
   * failed sign-ins from the session's address: a stolen session must not become a password oracle.
   */
  async changePassword(session: AuthenticatedSession, input: PasswordChangeInput): Promise<void> {
    const current = input.currentPassword.normalize('NFKC')
    const next = input.newPassword.normalize('NFKC')
    const problem = newPasswordProblem(next)
    if (problem !== undefined) throw invalid('#/newPassword', problem)
    if (next === current) throw invalid('#/newPassword', 'must differ from the current password')
    if (normalizeEmail(next) === session.user.email) throw invalid('#/newPassword', 'must not be your email')

    const { stores, audit } = this.deps
    const tenantId = session.tenant.id
    const attempt = { email: session.user.email, ip: session.context.actor.ip }
    await this.throttle.admit(attempt)
    const user = await stores.read.consoleUsers.get(tenantId, session.user.id)
    if (!user) throw new AppError('session_expired', 'Your console user was removed.')
    // Not charged to the address as well: a session guesses at its own user's password only, and
    // the address's count is there against spraying over many emails.
    if (!(await verifyPassword(current, user.password_hash)))
      throw new AppError(
        'current_password_incorrect',
        'The current password is wrong; the password is unchanged.',
      )

    const passwordHash = await hashPassword(next)
    await stores.transaction(async (s) => {
      await s.consoleUsers.setPassword(tenantId, user.id, passwordHash, false)
      const ended = await s.consoleSessions.deleteForUser(tenantId, user.id, session.tokenHash)
      await this.throttle.succeeded(attempt, s.signInThrottle)
      await audit.record(s.audit, tenantId, session.context.actor, {
        action: 'console_user.password_changed',
        target: { type: 'console_user', id: user.id },
        details: { otherSessionsEnded: ended },
      })
    })
  }

  /** Drops sessions past their expiry and sign-in counters past their window (hourly, off the request path). */
  async purgeExpired(): Promise<number> {
    const now = this.deps.now()
    const sessions = await this.deps.stores.read.consoleSessions.deleteExpired(
      now,
      now - SESSION_IDLE_SECONDS * SECOND_MICROS,
    )
    return sessions + (await this.throttle.purgeExpired())
  }
}
