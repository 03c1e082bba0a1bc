import os from 'node:os'

/** The 1-minute load average now, to compare with the one the summary gives for the run's start. */
export function loadAverageNow(): number {
  return Math.round((os.loadavg()[0] ?? Number.NaN) * 100) / 100
}

/**
 * The machine's load before and after a benchmark, for its notes: on these shared two-core machines a
 * neighbour's work lands in every figure, and latency under a queue does not cancel out in a ratio.
 */
export function loadNote(before: number, after: number, cores = os.cpus().length): string {
  return `1-minute load average ${before} before, ${after} after, on ${cores} cores.`
}
