import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CoalescedCall } from '../../shared/coalesced-call.js'

describe('CoalescedCall', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  const setup = () => {
    const runs: number[] = []
    const call = new CoalescedCall(
      () => runs.push(Date.now()),
      50,
      () => Date.now(),
    )
    return { runs, call }
  }

  it('runs the first request at once, and folds those within the gap into one run at its end', () => {
    const { runs, call } = setup()
    const start = Date.now()
    call.request()
    expect(runs).toEqual([start])
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(0.4)
      call.request()
    }
    expect(runs).toHaveLength(1)
    vi.advanceTimersByTime(50)
    expect(runs).toEqual([start, start + 50])
    vi.advanceTimersByTime(1000)
    expect(runs).toHaveLength(2)
  })

  it('runs at once again once a gap has passed with no request', () => {
    const { runs, call } = setup()
    call.request()
    vi.advanceTimersByTime(80)
    call.request()
    expect(runs).toHaveLength(2)
  })

  it('never drops a request: one asked for just before a run is served by it, one just after by the next', () => {
    const { runs, call } = setup()
    call.request()
    vi.advanceTimersByTime(10)
    call.request()
    vi.advanceTimersByTime(40)
    expect(runs).toHaveLength(2)
    call.request()
    expect(runs).toHaveLength(2)
    vi.advanceTimersByTime(50)
    expect(runs).toHaveLength(3)
  })

  it('drops the waiting run when cancelled', () => {
    const { runs, call } = setup()
    call.request()
    call.request()
    call.cancel()
    vi.advanceTimersByTime(500)
    expect(runs).toHaveLength(1)
  })
})
