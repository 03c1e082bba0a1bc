/**
 * The soak's judge (flatness.ts) must be able to fail: a leak, a descriptor that is never closed
 * and a backlog that keeps growing are caught, while a flat series with the noise of a shared
 * machine (a GC sawtooth, an outlier) and the warm-up's growth pass. The soak itself runs by
 * `npm run soak`, not here.
 */
import { describe, expect, it } from 'vitest'
import { median } from '../support/median.js'
import { type Bound, judge, type Point, quantile, rollingMinimum, theilSenSlope } from './flatness.js'

const SECONDS = 600
const memory: Bound = { kind: 'memory', maxGrowth: 0.25, floor: 8, maxPerHour: 100 }
const count: Bound = { kind: 'count', maxIncrease: 10 }
const backlog: Bound = { kind: 'backlog', factor: 1.5, slack: 120 }

/** One sample every 10 s over the load. */
function series(value: (t: number, i: number) => number): Point[] {
  return Array.from({ length: 61 }, (_, i) => ({ t: i * 10, value: value(i * 10, i) }))
}

/** Deterministic noise in [-1, 1]. */
const noise = (i: number) => Math.sin(i * 12.9898) * 0.999

describe('median and Theil–Sen slope', () => {
  it('are robust to outliers', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(median([])).toBeNaN()
    const line = series((t) => 100 + t / 10)
    line[30] = { t: 300, value: 10_000 }
    expect(theilSenSlope(line)).toBeCloseTo(0.1, 5)
    expect(quantile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.1)).toBe(1)
    expect(quantile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10, 11], 0.1)).toBe(2)
    expect(
      rollingMinimum(series((_, i) => [5, 3, 9, 9, 9, 9, 9, 1][i % 8] as number).slice(0, 8), 5).map(
        (p) => p.value,
      ),
    ).toEqual([5, 3, 3, 3, 3, 3, 9, 1])
  })
})

describe('judge', () => {
  it('passes flat memory with a GC sawtooth, an outlier and growth during the warm-up', () => {
    const points = series((t, i) => (t < 90 ? 60 + t / 3 : 90 + (i % 6) * 3 + noise(i) * 2))
    points[45] = { t: 450, value: 200 }
    const result = judge(points, SECONDS, 0.2, memory, 'MB')
    expect(result.ok, result.reason).toBe(true)
  })

  it('fails a leak of a third in ten minutes', () => {
    const result = judge(
      series((t, i) => 100 + t / 10 + noise(i)),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.ok).toBe(false)
    expect(result.reason).toMatch(/grew|trend/)
  })

  it('fails a slower leak the thirds confirm through its trend', () => {
    // 50 → 80 MB: under +25% between the thirds (+20%), but 180 MB/h.
    const result = judge(
      series((t) => 50 + (t * 180) / 3600),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.slopePerHour).toBeCloseTo(180, 0)
    expect(result.ok).toBe(false)
    expect(result.reason).toMatch(/trend/)
  })

  it('does not fail a trend the thirds do not confirm (the warm-up still settling)', () => {
    const result = judge(
      series((t) => (t < 300 ? 130 + t / 10 : 160)),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.slopePerHour).toBeGreaterThan(100)
    expect(result.ok, result.reason).toBe(true)
  })

  it('judges memory on its floor: a heap whose teeth are sampled higher late is not a leak', () => {
    // Collections bring the heap back to 40 MB; the samples land anywhere on the teeth (to 184 MB).
    const result = judge(
      series((_, i) => 40 + ((i * 7) % 10) * (i < 40 ? 8 : 16)),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.statistic).toBe('floor')
    expect(result.ok, result.reason).toBe(true)
    // Its medians rose by more than a quarter: judged on them, it would have failed.
    expect(result.median).toBeGreaterThan(60)
    const late = series((_, i) => 40 + ((i * 7) % 10) * (i < 40 ? 8 : 16)).filter((p) => p.t >= 400)
    const middle = series((_, i) => 40 + ((i * 7) % 10) * 8).filter((p) => p.t >= 200 && p.t < 400)
    expect(median(late.map((p) => p.value))).toBeGreaterThan(1.25 * median(middle.map((p) => p.value)))
  })

  it('fails a heap whose floor rises under the teeth', () => {
    const result = judge(
      series((t, i) => 40 + t / 6 + ((i * 7) % 10) * 8),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.ok).toBe(false)
  })

  it('does not fail a floor lowered by a collection handing memory back (medians flat)', () => {
    // Resident memory dips to 125 MB once in the second third, else steady at 164 MB.
    const result = judge(
      series((t) => (t === 250 || t === 260 ? 125 : 164)),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.lastThird / result.secondThird).toBeGreaterThan(1.25)
    expect(result.ok, result.reason).toBe(true)
  })

  it('does not fail small memory on noise within the floor', () => {
    const result = judge(
      series((_, i) => (i < 40 ? 4 : 7)),
      SECONDS,
      0.2,
      memory,
      'MB',
    )
    expect(result.ok, result.reason).toBe(true)
  })

  it('fails descriptors that are never closed, and passes a pool that varies', () => {
    expect(
      judge(
        series((t) => 30 + Math.floor(t / 10)),
        SECONDS,
        0.2,
        count,
        'fds',
      ).ok,
    ).toBe(false)
    expect(
      judge(
        series((_, i) => 30 + (i % 5)),
        SECONDS,
        0.2,
        count,
        'fds',
      ).ok,
    ).toBe(true)
  })

  it('fails a backlog that keeps growing, and passes one that stays bounded', () => {
    expect(
      judge(
        series((t) => (t * t) / 50),
        SECONDS,
        0.2,
        backlog,
        'punches',
      ).ok,
    ).toBe(false)
    expect(
      judge(
        series((_, i) => (i % 3) * 40),
        SECONDS,
        0.2,
        backlog,
        'punches',
      ).ok,
    ).toBe(true)
  })

  it('refuses to judge without samples in both thirds', () => {
    const result = judge(series(() => 1).slice(0, 25), SECONDS, 0.2, count, 'fds')
    expect(result.ok).toBe(false)
    expect(result.reason).toMatch(/too few samples/)
  })

  it('shows a reported series without judging it', () => {
    expect(
      judge(
        series((t) => t),
        SECONDS,
        0.2,
        { kind: 'report' },
        'ms',
      ).ok,
    ).toBe(true)
  })
})
