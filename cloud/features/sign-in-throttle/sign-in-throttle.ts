import { AppError } from '../../app-error.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import { delayAfter, SIGN_IN_DELAYS } from './sign-in-delays.js'
import type { SignInCounterRow, SignInThrottleStore } from './store.js'

const SECOND = 1_000_000

/** What one sign-in attempt is counted against. */
export interface SignInAttempt {
  email: string
  ip: string | null
}

/** The stores the throttle uses. */
export interface SignInThrottleStores {
  signInThrottle: SignInThrottleStore
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

function loginLocked(until: number, now: number): AppError {
  const seconds = Math.max(1, Math.ceil((until - now) / SECOND))
  const wait = seconds < 90 ? `${seconds} second(s)` : `${Math.ceil(seconds / 60)} minute(s)`
  return new AppError(
    'login_locked',
    `Too many failed sign-ins for this email from this address, or from this address. Try again in ${wait}.`,
    { retryAfterSeconds: seconds },
  )
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
    private readonly deps: { stores: UnitOfWork<SignInThrottleStores>; now: () => number },
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
    const live = (row: SignInCounterRow | undefined) =>
      row && row.window_started_at > windowStart ? row : undefined
    const waitOf = (row: SignInCounterRow | undefined) =>
      row?.locked_until != null && row.locked_until > now ? row.locked_until : 0

    // One transaction: the counters it charges stay locked until it ends.
    return this.deps.stores.transaction(async ({ signInThrottle: store }) => {
      if (keys.address !== undefined) {
        const address = live(await store.read(keys.address))
        const until = waitOf(address)
        if (until > 0) throw loginLocked(until, now)
      }
      // Conditional, so that of two concurrent attempts the second sees the first's charge (the
      // upsert takes the row's lock, and re-reads it before its WHERE).
      const pair = await store.charge(keys.pair, this.rules.accountFromAddress, now, windowStart, true)
      if (!pair) {
        const until = waitOf(await store.read(keys.pair))
        throw loginLocked(Math.max(until, now + SECOND), now)
      }
      // Only an address past its own free failures for this email waits for the email's count.
      if (pair.failures > this.rules.accountFromAddress.free) {
        const until = waitOf(live(await store.read(keys.account)))
        if (until > 0) throw loginLocked(until, now)
      }
      await store.charge(keys.account, this.rules.account, now, windowStart, false)
      return { delaySeconds: delayAfter(pair.failures, this.rules.accountFromAddress) }
    })
  }

  /** The password was wrong: the address pays for it too (spraying across emails). */
  async failed(attempt: SignInAttempt): Promise<void> {
    const { address } = keysOf(attempt)
    if (address === undefined) return
    const now = this.deps.now()
    await this.deps.stores.read.signInThrottle.charge(
      address,
      this.rules.address,
      now,
      now - this.rules.windowSeconds * SECOND,
      false,
    )
  }

  /**
   * The password was right: the email's failures are forgotten, from this address and from all.
   * Through `store`: pass the transaction's, so they are forgotten as the sign-in commits.
   */
  async succeeded(
    attempt: SignInAttempt,
    store: SignInThrottleStore = this.deps.stores.read.signInThrottle,
  ): Promise<void> {
    const { pair, account } = keysOf(attempt)
    await store.deleteKeys([pair, account])
  }

  /** An operator's reset (the CLI): the email may sign in again at once, from anywhere. */
  async forgetEmail(
    email: string,
    store: SignInThrottleStore = this.deps.stores.read.signInThrottle,
  ): Promise<void> {
    const { account } = keysOf({ email, ip: null })
    // Every `pair:<address> <email>` key of this email, whatever the address.
    await store.deleteKeyAndPairsEndingWith(account, ` ${email}`)
  }

  /** Counters whose window and wait have both passed tell nothing any more. */
  async purgeExpired(): Promise<number> {
    const now = this.deps.now()
    return this.deps.stores.read.signInThrottle.deleteExpired(now - this.rules.windowSeconds * SECOND, now)
  }
}
