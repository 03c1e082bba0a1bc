import { type Kysely, sql, type Transaction } from 'kysely'
import { AppError } from '../../app-error.js'
import type { Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** How the wait after failed sign-ins grows, for one kind of counter. */
export interface DelayRule {
  /** Failures that cost no wait: typos. */
  free: number
  /** The wait after the first failure beyond those; it doubles with each further failure. */
  firstDelaySeconds: number
  /** The wait never grows beyond this. */
  maxDelaySeconds: number
}

export interface SignInDelays {
  /** One email from one address: a guesser's own attempts. */
  accountFromAddress: DelayRule
  /**
   * One email from every address together. It holds back only addresses that have used up their
   * own free failures for that email: a guesser elsewhere cannot keep the owner out.
   */
  account: DelayRule
  /** One address, whatever the emails (password spraying: one guess at many emails). */
  address: DelayRule
  /** A counter starts afresh this long after its first failure. */
  windowSeconds: number
}

/**
 * Growing delays instead of a lockout (OWASP Authentication Cheat Sheet, "Account Lockout": a lock
 * an attacker can trigger is a denial of service against the account's owner). After the free
 * failures, the next attempt waits 1 s, then 2, 4, 8... up to 15 minutes: guessing slows to about
 * a hundred attempts a day per email and address, while the owner, from an address that has not
 * failed, is never refused because of someone else's guesses. Emails that are nobody's are counted
 * the same way, so a wait never tells whether an email exists.
 */
export const SIGN_IN_DELAYS: SignInDelays = {
  accountFromAddress: { free: 3, firstDelaySeconds: 1, maxDelaySeconds: 900 },
  account: { free: 10, firstDelaySeconds: 1, maxDelaySeconds: 900 },
  address: { free: 50, firstDelaySeconds: 1, maxDelaySeconds: 900 },
  windowSeconds: 24 * 3600,
}

const SECOND = 1_000_000

/** The wait, in seconds, after the `failures`-th failure. */
export function delayAfter(failures: number, rule: DelayRule): number {
  if (failures <= rule.free) return 0
  const doublings = Math.min(failures - rule.free - 1, 30)
  return Math.min(rule.maxDelaySeconds, rule.firstDelaySeconds * 2 ** doublings)
}

/** What one sign-in attempt is counted against. */
export interface SignInAttempt {
  email: string
  ip: string | null
}

interface Keys {
  /** `pair:<address> <email>`: an address has no space, so the first space ends it. */
  pair: string
  account: string
  address: string | undefined
}

function keysOf(attempt: SignInAttempt): Keys {
  return {
    pair: `pair:${attempt.ip ?? '-'} ${attempt.email}`,
    account: `email:${attempt.email}`,
    address: attempt.ip === null ? undefined : `ip:${attempt.ip}`,
  }
}

export function loginLocked(until: number, now: number): AppError {
  const seconds = Math.max(1, Math.ceil((until - now) / SECOND))
  const wait = seconds < 90 ? `${seconds} second(s)` : `${Math.ceil(seconds / 60)} minute(s)`
  return new AppError(
    'login_locked',
    `Too many failed sign-ins for this email from this address, or from this address. Try again in ${wait}.`,
    { headers: { 'retry-after': String(seconds) } },
  )
}

interface CounterRow {
  key: string
  failures: number
  window_started_at: number
  locked_until: number | null
}

/**
 * The failed-sign-in counters, in the database so that every instance enforces the same delays.
 * An attempt is counted against its email and its email-from-address before the password is
 * checked, and forgiven when it turns out right: a burst of concurrent guesses cannot all pass a
 * check made before any of them has failed. The address's own counter is charged once the password
 * turns out wrong (`failed`).
 */
export class SignInThrottle {
  constructor(
    private readonly deps: { db: Kysely<Database>; now: () => number },
    private readonly rules = SIGN_IN_DELAYS,
  ) {}

  /**
   * Refuses (429 `login_locked`, with Retry-After) an attempt that comes before its wait has passed;
   * else counts it. Answers the wait a wrong password will now cost this email from this address.
   */
  async admit(attempt: SignInAttempt): Promise<{ delaySeconds: number }> {
    const now = this.deps.now()
    const keys = keysOf(attempt)
    const windowStart = now - this.rules.windowSeconds * SECOND
    const live = (row: CounterRow | undefined) =>
      row && row.window_started_at > windowStart ? row : undefined
    const waitOf = (row: CounterRow | undefined) =>
      row?.locked_until != null && row.locked_until > now ? row.locked_until : 0

    return this.deps.db.transaction().execute(async (trx) => {
      if (keys.address !== undefined) {
        const address = live(await this.read(trx, keys.address))
        const until = waitOf(address)
        if (until > 0) throw loginLocked(until, now)
      }
      // Conditional, so that of two concurrent attempts the second sees the first's charge (the
      // upsert takes the row's lock, and re-reads it before its WHERE).
      const pair = await this.charge(trx, keys.pair, this.rules.accountFromAddress, now, true)
      if (!pair) {
        const until = waitOf(await this.read(trx, keys.pair))
        throw loginLocked(Math.max(until, now + SECOND), now)
      }
      // Only an address past its own free failures for this email waits for the email's count.
      if (pair.failures > this.rules.accountFromAddress.free) {
        const until = waitOf(live(await this.read(trx, keys.account)))
        if (until > 0) throw loginLocked(until, now)
      }
      await this.charge(trx, keys.account, this.rules.account, now, false)
      return { delaySeconds: delayAfter(pair.failures, this.rules.accountFromAddress) }
    })
  }

  /** The password was wrong: the address pays for it too (spraying across emails). */
  async failed(attempt: SignInAttempt): Promise<void> {
    const { address } = keysOf(attempt)
    if (address !== undefined)
      await this.charge(this.deps.db, address, this.rules.address, this.deps.now(), false)
  }

  /** The password was right: the email's failures are forgotten, from this address and from all. */
  async succeeded(attempt: SignInAttempt, executor: Executor = this.deps.db): Promise<void> {
    const { pair, account } = keysOf(attempt)
    await executor.deleteFrom('console_sign_in_failures').where('key', 'in', [pair, account]).execute()
  }

  /** An operator's reset (the CLI): the email may sign in again at once, from anywhere. */
  async forgetEmail(email: string, executor: Executor = this.deps.db): Promise<void> {
    const suffix = ` ${email}`
    // Characters as SQL counts them (code points), not UTF-16 units.
    const length = [...suffix].length
    await executor
      .deleteFrom('console_sign_in_failures')
      .where((eb) =>
        eb.or([
          eb('key', '=', `email:${email}`),
          eb.and([
            eb('key', 'like', 'pair:%'),
            eb(sql`substr(key, length(key) - ${length - 1})`, '=', suffix),
          ]),
        ]),
      )
      .execute()
  }

  /** Counters whose window and wait have both passed tell nothing any more. */
  async purgeExpired(): Promise<number> {
    const now = this.deps.now()
    const result = await this.deps.db
      .deleteFrom('console_sign_in_failures')
      .where('window_started_at', '<=', now - this.rules.windowSeconds * SECOND)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  private read(executor: Executor, key: string): Promise<CounterRow | undefined> {
    return executor
      .selectFrom('console_sign_in_failures')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst()
  }

  /**
   * One more failure for `key`, atomically (an upsert, so concurrent instances cannot lose a count):
   * the first of a new window when the last one has passed, and the wait it earns. `unlessWaiting`:
   * changes nothing, and answers undefined, while the key's wait runs. The SET expressions all read
   * the row as it was (SQL semantics, in PostgreSQL and SQLite alike).
   */
  private async charge(
    executor: Executor,
    key: string,
    rule: DelayRule,
    now: number,
    unlessWaiting: boolean,
  ): Promise<{ failures: number } | undefined> {
    const windowOver = now - this.rules.windowSeconds * SECOND
    const failures = sql.ref<number>('console_sign_in_failures.failures')
    const started = sql.ref<number>('console_sign_in_failures.window_started_at')
    const locked = sql.ref<number | null>('console_sign_in_failures.locked_until')
    const next = sql<number>`case when ${started} <= ${windowOver} then 1 else ${failures} + 1 end`
    // The wait after the next failure, as SQL: 0 within the free failures, then doubling to the cap.
    // Cast: in a CASE of parameters alone, PostgreSQL would take them for text.
    const at = (seconds: number) => sql`cast(${now + seconds * SECOND} as bigint)`
    const cases = [sql`when ${next} <= ${rule.free} then null`]
    for (let n = rule.free + 1; delayAfter(n - 1, rule) < rule.maxDelaySeconds; n++)
      cases.push(sql`when ${next} = ${n} then ${at(delayAfter(n, rule))}`)
    const until = sql<number | null>`case ${sql.join(cases, sql` `)} else ${at(rule.maxDelaySeconds)} end`
    const first = delayAfter(1, rule)
    const row = await executor
      .insertInto('console_sign_in_failures')
      .values({
        key,
        failures: 1,
        window_started_at: now,
        locked_until: first > 0 ? now + first * SECOND : null,
      })
      .onConflict((oc) => {
        const update = oc.column('key').doUpdateSet({
          failures: next,
          window_started_at: sql<number>`case when ${started} <= ${windowOver} then ${now} else ${started} end`,
          locked_until: until,
        })
        return unlessWaiting
          ? update.where((eb) =>
              eb.or([eb(locked, 'is', null), eb(locked, '<=', now), eb(started, '<=', windowOver)]),
            )
          : update
      })
      .returning(['failures'])
      .executeTakeFirst()
    return row
  }
}
