/** Percentiles of some numbers (nearest rank), for latency figures. */
export function percentiles(values: readonly number[]): {
  p50: number
  p90: number
  p99: number
  max: number
  count: number
} {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) =>
    sorted.length === 0
      ? Number.NaN
      : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number)
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), count: sorted.length }
}

/** ms with a tenth, for a note. */
export const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : String(value))
