import { type Kysely, sql, type Transaction } from 'kysely'
import { AppError } from '../../app-error.js'
import type { Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** Failures that lock a key out, counted within a window; then how long the lock lasts. */
export interface LockoutRule {
  failures: number
  windowSeconds: number
  /** At least the window: a lock that ends finds the window ended too, and counting starts afresh. */
  lockSeconds: number
}

/**
 * Issue 6: "Login is rate-limited, with lockout after repeated failures". Five wrong passwords for
 * one email within 15 minutes lock that email for 15 minutes, whoever tries and from wherever; fifty
 * from one address lock the address (password spraying: one guess at many emails). Emails that
 * are nobody's are counted the same way, so a lockout never tells whether an email exists.
 */
export const SIGN_IN_LOCKOUT: { email: LockoutRule; ip: LockoutRule } = {
  email: { failures: 5, windowSeconds: 900, lockSeconds: 900 },
  ip: { failures: 50, windowSeconds: 900, lockSeconds: 900 },
}

const SECOND = 1_000_000

interface Key {
  key: string
  rule: LockoutRule
}

/** What one sign-in attempt is counted against. */
export interface SignInAttempt {
  email: string
  ip: string | null
}

function keysOf(attempt: SignInAttempt, rules: typeof SIGN_IN_LOCKOUT): Key[] {
  const keys = [{ key: `email:${attempt.email}`, rule: rules.email }]
  if (attempt.ip !== null) keys.push({ key: `ip:${attempt.ip}`, rule: rules.ip })
  return keys
}

export function loginLocked(lockedUntil: number, now: number): AppError {
  const seconds = Math.max(1, Math.ceil((lockedUntil - now) / SECOND))
  return new AppError(
    'login_locked',
    `Too many failed sign-ins for this email or from this address. Try again in ${Math.ceil(seconds / 60)} minute(s).`,
    { headers: { 'retry-after': String(seconds) } },
  )
}

/**
 * The failed-sign-in counters, in the database so that every instance enforces the same lockout.
 * An attempt is counted before its password is checked and forgiven when it turns out right: a
 * burst of concurrent guesses cannot all pass a check made before any of them has failed.
 */
export class SignInThrottle {
  constructor(
    private readonly deps: { db: Kysely<Database>; now: () => number },
    private readonly rules = SIGN_IN_LOCKOUT,
  ) {}

  /**
   * Refuses (429 `login_locked`, with Retry-After) a locked email or address; else counts the attempt.
   * `lastAllowed`: the email's last attempt before the lock, which locks it if the password is wrong.
   */
  async admit(attempt: SignInAttempt): Promise<{ lastAllowed: boolean }> {
    const now = this.deps.now()
    const keys = keysOf(attempt, this.rules)
    const locked = await this.deps.db
      .selectFrom('console_sign_in_failures')
      .select('locked_until')
      .where(
        'key',
        'in',
        keys.map((k) => k.key),
      )
      .where('locked_until', '>', now)
      .execute()
    const until = Math.max(0, ...locked.map((row) => row.locked_until ?? 0))
    if (until > now) throw loginLocked(until, now)
    let refusedUntil = 0
    let lastAllowed = false
    for (const [i, { key, rule }] of keys.entries()) {
      const row = await this.charge(this.deps.db, key, rule, now)
      // Over the limit: attempts that raced past the check above while the last allowed one ran.
      if (row.failures > rule.failures)
        refusedUntil = Math.max(refusedUntil, row.locked_until ?? now + SECOND)
      if (i === 0) lastAllowed = row.failures === rule.failures
    }
    if (refusedUntil > 0) throw loginLocked(refusedUntil, now)
    return { lastAllowed }
  }

  /** The password was right: the email's failures are forgotten; this attempt is not held against the address. */
  async succeeded(attempt: SignInAttempt, executor: Executor = this.deps.db): Promise<void> {
    const [email, ip] = keysOf(attempt, this.rules)
    if (email) await executor.deleteFrom('console_sign_in_failures').where('key', '=', email.key).execute()
    if (ip) {
      const failures = sql.ref<number>('failures')
      await executor
        .updateTable('console_sign_in_failures')
        .set({
          failures: sql<number>`${failures} - 1`,
          locked_until: sql<
            number | null
          >`case when ${failures} - 1 < ${ip.rule.failures} then null else locked_until end`,
        })
        .where('key', '=', ip.key)
        .where('failures', '>', 0)
        .execute()
    }
  }

  /** An operator's reset (the CLI): the email may sign in again at once. */
  async forgetEmail(email: string, executor: Executor = this.deps.db): Promise<void> {
    await executor.deleteFrom('console_sign_in_failures').where('key', '=', `email:${email}`).execute()
  }

  /** Counters whose window and lock have both passed tell nothing any more. */
  async purgeExpired(): Promise<number> {
    const now = this.deps.now()
    const longest = Math.max(this.rules.email.windowSeconds, this.rules.ip.windowSeconds) * SECOND
    const result = await this.deps.db
      .deleteFrom('console_sign_in_failures')
      .where('window_started_at', '<=', now - longest)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  /**
   * One more failure for `key`, atomically (an upsert, so concurrent instances cannot lose a count):
   * the first of a new window when the last one has passed, and a lock when it reaches the limit.
   * The SET expressions all read the row as it was (SQL semantics, in PostgreSQL and SQLite alike).
   */
  private async charge(executor: Executor, key: string, rule: LockoutRule, now: number) {
    const windowOver = now - rule.windowSeconds * SECOND
    const lockedUntil = now + rule.lockSeconds * SECOND
    const failures = sql.ref<number>('console_sign_in_failures.failures')
    const started = sql.ref<number>('console_sign_in_failures.window_started_at')
    const locked = sql.ref<number | null>('console_sign_in_failures.locked_until')
    return executor
      .insertInto('console_sign_in_failures')
      .values({
        key,
        failures: 1,
        window_started_at: now,
        locked_until: rule.failures <= 1 ? lockedUntil : null,
      })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          failures: sql<number>`case when ${started} <= ${windowOver} then 1 else ${failures} + 1 end`,
          window_started_at: sql<number>`case when ${started} <= ${windowOver} then ${now} else ${started} end`,
          locked_until: sql<number | null>`case
            when ${started} <= ${windowOver} then ${rule.failures <= 1 ? lockedUntil : sql`null`}
            when ${failures} + 1 >= ${rule.failures} then ${lockedUntil}
            else ${locked} end`,
        }),
      )
      .returning(['failures', 'locked_until'])
      .executeTakeFirstOrThrow()
  }
}
