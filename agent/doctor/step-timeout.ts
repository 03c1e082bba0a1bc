/**
 * A signal that aborts when the run's signal does or after `timeoutMs`: every step of a check
 * (a connection, a request, an open) is bounded by it.
 */
export function stepSignal(run: AbortSignal, timeoutMs: number): AbortSignal {
  return AbortSignal.any([run, AbortSignal.timeout(timeoutMs)])
}

/** `work`, or a rejection when `signal` aborts first (for calls that take no signal of their own). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error(`${what}: no answer in time`))
  let onAbort = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error(`${what}: no answer in time`))
    signal.addEventListener('abort', onAbort, { once: true })
  })
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort))
}
