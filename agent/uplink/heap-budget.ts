/**
 * What the forwarder may hold in its heap, against the heap V8 was given: the service unit caps it
 * (deploy/hajri-agent.service, --max-old-space-size) to keep the agent's RSS low while a backlog
 * drains, and a configuration that needs more would end in "JavaScript heap out of
 * memory", a restart, and the same again at the same chunks: nothing lost, nothing forwarded.
 * Said once at start, in the log, with what to change.
 */

/**
 * Heap a punch in hand takes: its object, and its share of the chunk's text and of the request
 * body (measured at about 0.6 KB; rounded up).
 */
const BYTES_PER_PUNCH = 1024
/** Heap the rest of the agent uses (broker, HTTP, status, logging; measured at 20-30 MB). */
const REST_OF_AGENT_BYTES = 32 * 2 ** 20

/**
 * The most punches the forwarder holds at once: `concurrency` chunks, or twice `concurrency` full
 * batches and one chunk more, whichever is bigger (Forwarder.run).
 */
export function punchesInHandAtMost(settings: {
  concurrency: number
  batchSize: number
  chunkPunches: number
}): number {
  const { concurrency, batchSize, chunkPunches } = settings
  return Math.max(concurrency * chunkPunches, 2 * concurrency * batchSize + chunkPunches)
}

/** A warning when the heap V8 allows (`heapLimitBytes`) is too small for these settings; else undefined. */
export function heapBudgetWarning(
  settings: { concurrency: number; batchSize: number; chunkPunches: number },
  heapLimitBytes: number,
): string | undefined {
  const needed = REST_OF_AGENT_BYTES + punchesInHandAtMost(settings) * BYTES_PER_PUNCH
  if (needed <= heapLimitBytes) return undefined
  const mb = (bytes: number) => Math.ceil(bytes / 2 ** 20)
  return (
    `cloud.concurrency ${settings.concurrency} x spool.chunkPunches ${settings.chunkPunches} may need ` +
    `about ${mb(needed)} MB of heap while a backlog drains, and node allows ${mb(heapLimitBytes)} MB: ` +
    `raise --max-old-space-size in the service file to ${mb(needed)}, or lower those settings`
  )
}
