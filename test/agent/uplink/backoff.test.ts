import { getEventListeners } from 'node:events'
import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { DEFAULT_BACKOFF, retryDelay, serverHintMs, sleep } from '../../../agent/uplink/backoff.js'

const OPTIONS = { baseMs: 500, capMs: 60_000, floorMs: 250 }
/** The most a server hint is honoured (backoff.ts MAX_HINT_MS): an hour. */
const HOUR = 3_600_000
/** Just under 1: the largest share of the ceiling a full-jitter draw can take. */
const ALMOST_ONE = 1 - 2 ** -40

describe('retryDelay', () => {
  it('never goes below the floor, even when the jitter draws zero', () => {
    for (const attempt of [0, 1, 5, 50]) expect(retryDelay(attempt, OPTIONS, 0, () => 0)).toBe(250)
  })

  it('doubles the jitter ceiling with each attempt, from baseMs', () => {
    // The largest draw shows the ceiling itself: floor + (almost) the whole ceiling.
    const ceilings = [0, 1, 2, 3, 4].map((attempt) => retryDelay(attempt, OPTIONS, 0, () => ALMOST_ONE) - 250)
    expect(ceilings).toEqual([499, 999, 1999, 3999, 7999])
    // Half the ceiling with a draw of 0.5: the draw scales the whole range (full jitter), not a part of it.
    expect(retryDelay(3, OPTIONS, 0, () => 0.5)).toBe(250 + 2000)
  })

  it('stops doubling at capMs, however many attempts have failed', () => {
    for (const attempt of [7, 8, 30, 31, 1000, Number.MAX_SAFE_INTEGER]) {
      expect(retryDelay(attempt, OPTIONS, 0, () => ALMOST_ONE)).toBe(250 + 59_999)
    }
    expect(retryDelay(6, OPTIONS, 0, () => ALMOST_ONE)).toBe(250 + 31_999)
  })

  it('takes the server hint when it is longer than the jitter', () => {
    expect(retryDelay(0, OPTIONS, 7000, () => 0.5)).toBe(7000)
    // A short hint does not shorten our own backoff.
    expect(retryDelay(10, OPTIONS, 300, () => 0.5)).toBe(250 + 30_000)
  })

  it('honours a server hint only up to an hour', () => {
    expect(retryDelay(0, OPTIONS, 10 * HOUR, () => 0)).toBe(HOUR)
    expect(retryDelay(0, OPTIONS, HOUR - 1, () => 0)).toBe(HOUR - 1)
  })

  it('stays within its bounds for any attempt, hint and draw', () => {
    fc.assert(
      fc.property(
        fc.nat(10_000),
        fc.nat(100 * HOUR),
        fc.double({ min: 0, max: ALMOST_ONE, noNaN: true }),
        (attempt, hint, draw) => {
          const delay = retryDelay(attempt, DEFAULT_BACKOFF, hint, () => draw)
          expect(Number.isInteger(delay)).toBe(true)
          expect(delay).toBeGreaterThanOrEqual(DEFAULT_BACKOFF.floorMs)
          expect(delay).toBeGreaterThanOrEqual(Math.min(hint, HOUR))
          expect(delay).toBeLessThan(Math.max(DEFAULT_BACKOFF.floorMs + DEFAULT_BACKOFF.capMs, HOUR + 1))
        },
      ),
    )
  })

  it('uses Math.random when no source of randomness is given', () => {
    const spy = vi.spyOn(Math, 'random').mockReturnValue(0.25)
    try {
      expect(retryDelay(2, OPTIONS)).toBe(250 + 500)
      expect(spy).toHaveBeenCalled()
    } finally {
      spy.mockRestore()
    }
  })
})

describe('serverHintMs', () => {
  // A whole second, as HTTP dates have no fraction.
  const now = Date.parse('2026-11-21T04:00:00Z')

  it('reads Retry-After in seconds (RFC 9110 §10.2.3 delay-seconds)', () => {
    expect(serverHintMs({ 'retry-after': '7' }, now)).toBe(7000)
    expect(serverHintMs({ 'retry-after': '0' }, now)).toBe(0)
    expect(serverHintMs({ 'retry-after': ' 120 ' }, now)).toBe(120_000)
  })

  it('reads Retry-After as an HTTP-date, relative to now', () => {
    expect(serverHintMs({ 'retry-after': 'Sat, 21 Nov 2026 04:00:30 GMT' }, now)).toBe(30_000)
    expect(serverHintMs({ 'retry-after': new Date(now + 90_000).toUTCString() }, now)).toBe(90_000)
  })

  it('reads a date already past as "now", never a negative wait', () => {
    expect(serverHintMs({ 'retry-after': 'Sat, 21 Nov 2026 03:59:00 GMT' }, now)).toBe(0)
  })

  it('falls back to RateLimit-Reset (seconds) without a Retry-After', () => {
    expect(serverHintMs({ 'ratelimit-reset': '12' }, now)).toBe(12_000)
  })

  it('prefers Retry-After to RateLimit-Reset', () => {
    expect(serverHintMs({ 'retry-after': '3', 'ratelimit-reset': '12' }, now)).toBe(3000)
  })

  it('takes the first of a repeated header', () => {
    expect(serverHintMs({ 'retry-after': ['4', '9'] }, now)).toBe(4000)
    expect(serverHintMs({ 'ratelimit-reset': ['5', '9'] }, now)).toBe(5000)
  })

  it('answers undefined when no header says how long', () => {
    expect(serverHintMs({}, now)).toBeUndefined()
    expect(serverHintMs({ 'ratelimit-reset': 'later' }, now)).toBeUndefined()
    expect(serverHintMs({ 'content-type': 'application/json' }, now)).toBeUndefined()
  })

  // RFC 9110 §10.2.3: Retry-After is an HTTP-date or delay-seconds, nothing else. A value that is
  // neither must be ignored (falling back to RateLimit-Reset), not read by Date.parse's lenient
  // guesses: "1.5" is 5 January 2001 to V8, a date long past, so a 0 ms wait.
  it.each(['soon', '1.5', '-5', 'Friday'])(
    'ignores a Retry-After of %j that is neither seconds nor an HTTP-date',
    (value) => {
      expect(serverHintMs({ 'retry-after': value, 'ratelimit-reset': '12' }, now)).toBe(12_000)
    },
  )
})

describe('sleep', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Resolves to whether `promise` has settled once pending callbacks have run. */
  async function settled(promise: Promise<void>): Promise<boolean> {
    let done = false
    void promise.then(() => {
      done = true
    })
    await vi.advanceTimersByTimeAsync(0)
    return done
  }

  it('resolves after the delay, not before', async () => {
    vi.useFakeTimers()
    const signal = new AbortController().signal
    const slept = sleep(1000, signal)
    await vi.advanceTimersByTimeAsync(999)
    expect(await settled(slept)).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(await settled(slept)).toBe(true)
    // Its abort listener goes with it: a forwarder sleeping for ever on one signal must not leak.
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
  })

  it('resolves early when the signal aborts, and clears its timer', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const slept = sleep(60_000, controller.signal)
    expect(await settled(slept)).toBe(false)
    controller.abort()
    expect(await settled(slept)).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('resolves at once on a signal that has already aborted, setting no timer', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    controller.abort()
    const slept = sleep(60_000, controller.signal)
    expect(vi.getTimerCount()).toBe(0)
    expect(await settled(slept)).toBe(true)
  })
})
