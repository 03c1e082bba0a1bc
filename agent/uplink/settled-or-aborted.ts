/**
 * Resolves once `work` settles or `signal` aborts, whichever is first, and leaves nothing attached
 * to either once it has.
 *
 * Why not `Promise.race([work, stopped])` with one `stopped` promise for the life of a loop: a
 * race calls `then` on each promise it is given, and a pending promise keeps every reaction added to
 * it until it settles (ECMA-262, PerformPromiseThen). A loop that waits once per batch would keep a
 * reaction, a promise and a closure per wait for as long as it runs: the forwarder's heap grew by
 * about 150 bytes a punch that way.
 */
export function settledOrAborted(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
    work.then(done, done)
  })
}
