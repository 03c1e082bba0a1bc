/**
 * Runs `fn` on every item, at most `limit` at a time, pulling items as earlier ones finish, so a
 * long iterable is never turned into as many pending promises at once. Rejects with the first
 * error, after the calls already started have settled.
 */
export async function forEachBounded<T>(
  items: Iterable<T>,
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]()
  let failed = false
  let failure: unknown
  const worker = async () => {
    while (!failed) {
      const next = iterator.next()
      if (next.done) return
      try {
        await fn(next.value)
      } catch (err) {
        if (!failed) failure = err
        failed = true
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker))
  if (failed) throw failure
}

/** Like forEachBounded, collecting the results in the order of `items`. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length)
  await forEachBounded(items.keys(), limit, async (i) => {
    results[i] = await fn(items[i] as T)
  })
  return results
}
