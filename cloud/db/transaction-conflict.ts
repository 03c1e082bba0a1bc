/**
 * PostgreSQL SQLSTATEs that mean "this transaction lost a race, run it again": 40P01
 * deadlock_detected and 40001 serialization_failure (PostgreSQL manual, Appendix A; §13.2.3 and
 * §13.3.4 say the application is to retry such a transaction). Nothing of it was committed.
 */
const CONFLICT_SQLSTATES = new Set(['40P01', '40001'])

/** True when a statement or COMMIT failed because of a concurrent transaction, not because of its data. */
export function isTransactionConflict(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false
  return CONFLICT_SQLSTATES.has((err as { code: unknown }).code as string)
}

/** Runs of one transaction before its conflict is passed on (the error handler answers 503). */
const MAX_TRANSACTION_ATTEMPTS = 5

/**
 * Runs `attempt` (one whole transaction) again while it fails with a conflict, at most
 * MAX_TRANSACTION_ATTEMPTS times, after a short random pause that grows with each try: the
 * transactions that collided then rarely meet again in step. Past the bound the conflict is thrown.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T>,
  options: { attempts?: number; pauseMs?: (tries: number) => number } = {},
): Promise<T> {
  const attempts = options.attempts ?? MAX_TRANSACTION_ATTEMPTS
  const pauseMs = options.pauseMs ?? ((tries: number) => Math.random() * 10 * 2 ** tries)
  for (let tries = 1; ; tries++) {
    try {
      return await attempt()
    } catch (err) {
      if (!isTransactionConflict(err) || tries >= attempts) throw err
      await new Promise((resolve) => setTimeout(resolve, pauseMs(tries)))
    }
  }
}
