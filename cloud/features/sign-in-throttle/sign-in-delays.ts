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

/** The wait, in seconds, after the `failures`-th failure. */
export function delayAfter(failures: number, rule: DelayRule): number {
  if (failures <= rule.free) return 0
  const doublings = Math.min(failures - rule.free - 1, 30)
  return Math.min(rule.maxDelaySeconds, rule.firstDelaySeconds * 2 ** doublings)
}
