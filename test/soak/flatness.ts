/**
 * Whether a resource stayed flat under steady load (the soak), judged so that a noisy,
 * shared machine does not decide it: the warm-up is left out (the JIT, caches and pools fill up
 * then), the median of the last third of the load is set against the median of the second third
 * (a GC sawtooth or one slow sample moves a median little), and the trend is the Theil–Sen slope
 * (the median of the slopes between every two samples, which a few outliers cannot tilt). These
 * are bounds on resources, never on speed (docs/decisions/0032-speed-is-benchmarked.md).
 *
 * Memory is judged on its floor as well as its median: a heap is a sawtooth (garbage piles up
 * between collections, by tens of MB under load), and a sample falls anywhere on a tooth. What a
 * leak raises is what is left after a collection: per third, the 10th percentile of the samples;
 * for the trend, the slope of the rolling minimum over five samples (longer than a collection cycle
 * here). A leak raises both; a collection handing memory back lowers only the floor.
 */
import { median } from '../support/median.js'

export interface Point {
  /** Seconds since the load started. */
  t: number
  value: number
}

/** The `q` quantile (0..1) of the finite values, by nearest rank; NaN when there are none. */
export function quantile(values: readonly number[], q: number): number {
  const finite = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (finite.length === 0) return Number.NaN
  return finite[Math.min(finite.length - 1, Math.max(0, Math.ceil(q * finite.length) - 1))] as number
}

/** Each point replaced by the lowest value of the `window` points ending at it. */
export function rollingMinimum(points: readonly Point[], window: number): Point[] {
  return points.map((p, i) => ({
    t: p.t,
    value: Math.min(...points.slice(Math.max(0, i - window + 1), i + 1).map((q) => q.value)),
  }))
}

/** Theil–Sen: the median of the pairwise slopes, in value per second; NaN with fewer than two points. */
export function theilSenSlope(points: readonly Point[]): number {
  const usable = points.filter((p) => Number.isFinite(p.value))
  const slopes: number[] = []
  for (let i = 0; i < usable.length; i++) {
    for (let j = i + 1; j < usable.length; j++) {
      const a = usable[i] as Point
      const b = usable[j] as Point
      if (b.t !== a.t) slopes.push((b.value - a.value) / (b.t - a.t))
    }
  }
  return median(slopes)
}

/** The parts of a load of `seconds` that are compared: after the warm-up, the second and last thirds. */
export function windows(points: readonly Point[], seconds: number, warmupShare: number) {
  const judged = points.filter((p) => p.t >= seconds * warmupShare && p.t <= seconds)
  return {
    judged,
    second: points.filter((p) => p.t >= seconds / 3 && p.t < (2 * seconds) / 3),
    last: points.filter((p) => p.t >= (2 * seconds) / 3 && p.t <= seconds),
  }
}

export type Bound =
  /**
   * Memory: the last third's floor and median may not both be more than `maxGrowth` (a share) and
   * `floor` (MB: a small heap's noise) above the second third's; and the floor's trend may
   * extrapolate to at most `maxPerHour`, unless the thirds' floors and medians both rose by less
   * than 10% (a slope they do not confirm is noise).
   */
  | { kind: 'memory'; maxGrowth: number; floor: number; maxPerHour: number }
  /** A count (descriptors, handles): the last third's median at most `maxIncrease` above the second's. */
  | { kind: 'count'; maxIncrease: number }
  /** A backlog (the spool): the last third's median at most `factor` times the second's plus `slack`. */
  | { kind: 'backlog'; factor: number; slack: number }
  /** Shown, not judged (a timing, or a figure that grows by design, such as the database). */
  | { kind: 'report' }

export interface Judgement {
  first: number
  last: number
  median: number
  /** What the thirds are compared on: their median, or for memory their floor. */
  statistic: 'median' | 'floor'
  secondThird: number
  lastThird: number
  /** Value per hour, from the samples after the warm-up. */
  slopePerHour: number
  samples: number
  ok: boolean
  /** Why it failed, or the bound it kept, in words. */
  reason: string
}

/** How much both the floors and the medians must rise for a steep trend to count. */
const CONFIRMING_SHARE = 0.1

const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100)

export function describeBound(bound: Bound, unit: string): string {
  switch (bound.kind) {
    case 'memory':
      return `floor and median of the last third not both > second's +${Math.round(bound.maxGrowth * 100)}% and +${bound.floor} ${unit}; trend ≤ +${bound.maxPerHour} ${unit}/h unless both rose ${CONFIRMING_SHARE * 100}%`
    case 'count':
      return `last third ≤ second third +${bound.maxIncrease}`
    case 'backlog':
      return `last third ≤ ${bound.factor}× second third +${bound.slack}`
    case 'report':
      return 'shown, not judged'
  }
}

/** Judges one series of a load of `seconds`. */
export function judge(
  points: readonly Point[],
  seconds: number,
  warmupShare: number,
  bound: Bound,
  unit: string,
): Judgement {
  const { judged, second, last } = windows(points, seconds, warmupShare)
  const values = points.map((p) => p.value)
  const statistic = bound.kind === 'memory' ? 'floor' : 'median'
  const summarise = (part: readonly Point[]) =>
    statistic === 'floor'
      ? quantile(
          part.map((p) => p.value),
          0.1,
        )
      : median(part.map((p) => p.value))
  const secondThird = summarise(second)
  const lastThird = summarise(last)
  const trend =
    statistic === 'floor' ? windows(rollingMinimum(points, 5), seconds, warmupShare).judged : judged
  const slopePerHour = theilSenSlope(trend) * 3600
  const base: Omit<Judgement, 'ok' | 'reason'> = {
    first: values[0] ?? Number.NaN,
    last: values.at(-1) ?? Number.NaN,
    median: median(values),
    statistic,
    secondThird,
    lastThird,
    slopePerHour,
    samples: points.length,
  }
  if (bound.kind === 'report') return { ...base, ok: true, reason: 'shown, not judged' }
  if (
    second.length === 0 ||
    last.length === 0 ||
    !Number.isFinite(secondThird) ||
    !Number.isFinite(lastThird)
  ) {
    return { ...base, ok: false, reason: 'too few samples in the second or last third to judge' }
  }
  const growth = lastThird - secondThird
  switch (bound.kind) {
    case 'memory': {
      // A leak raises both the floor and the median of a third. Either alone is noise: a collection
      // that hands memory back to the system lowers a floor, the phase of the teeth moves a median.
      const share = secondThird > 0 ? growth / secondThird : Number.POSITIVE_INFINITY
      const secondMedian = median(second.map((p) => p.value))
      const medianGrowth = median(last.map((p) => p.value)) - secondMedian
      const medianShare = secondMedian > 0 ? medianGrowth / secondMedian : Number.POSITIVE_INFINITY
      const grew = (by: number) => share > by && medianShare > by
      if (grew(bound.maxGrowth) && growth > bound.floor && medianGrowth > bound.floor) {
        return {
          ...base,
          ok: false,
          reason: `grew from the second third to the last: floor +${round(share * 100)}% (+${round(growth)} ${unit}), median +${round(medianShare * 100)}%`,
        }
      }
      // A steep trend counts only when the thirds confirm it: over ten minutes a trend alone is
      // mostly the warm-up's tail or the phase of the teeth.
      if (slopePerHour > bound.maxPerHour && grew(CONFIRMING_SHARE)) {
        return {
          ...base,
          ok: false,
          reason: `floor trend +${round(slopePerHour)} ${unit}/h (bound ${bound.maxPerHour}), floors +${round(share * 100)}%, medians +${round(medianShare * 100)}%`,
        }
      }
      return { ...base, ok: true, reason: describeBound(bound, unit) }
    }
    case 'count':
      if (growth > bound.maxIncrease) {
        return {
          ...base,
          ok: false,
          reason: `+${round(growth)} from the second third to the last (bound +${bound.maxIncrease})`,
        }
      }
      return { ...base, ok: true, reason: describeBound(bound, unit) }
    case 'backlog':
      if (lastThird > bound.factor * secondThird + bound.slack) {
        return {
          ...base,
          ok: false,
          reason: `last third ${round(lastThird)} > ${bound.factor} × ${round(secondThird)} + ${bound.slack}: not bounded`,
        }
      }
      return { ...base, ok: true, reason: describeBound(bound, unit) }
  }
}
