export interface SerialBackoff {
  initialMs: number
  maxMs: number
}

/**
 * Exponential backoff with "equal jitter": between half and all of min(max, initial·2^attempt).
 * Never zero, so a port that fails at once cannot make a tight loop; jittered, so the adapters on
 * one USB hub that come back together are not all reopened in the same instant.
 */
export function serialBackoffDelay(
  attempt: number,
  backoff: SerialBackoff,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 32))
  return Math.max(1, Math.round(ceiling / 2 + (random() * ceiling) / 2))
}
