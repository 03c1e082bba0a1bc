/**
 * When the ADMS device model does what (agent/simulator/adms-schedule.ts), on a clock the test
 * moves: a poll every Delay (ErrorDelay after a failed one), uploads at once with Realtime=1, every
 * TransInterval otherwise or when a LOG command asks, and ErrorDelay after a failed upload.
 */
import { describe, expect, it } from 'vitest'
import { AdmsSchedule, type AdmsTiming } from '../../../agent/simulator/adms-schedule.js'

function schedule(timing: Partial<AdmsTiming> = {}) {
  let now = 1_000
  const s = new AdmsSchedule(
    () => ({ realtime: true, errorDelayMs: 30_000, delayMs: 10_000, transIntervalMs: 60_000, ...timing }),
    () => now,
  )
  s.reset()
  return {
    s,
    advance: (ms: number) => {
      now += ms
    },
  }
}

describe('AdmsSchedule', () => {
  it('polls at once after a handshake, then every Delay', () => {
    const { s, advance } = schedule()
    expect(s.next(false)).toBe('poll')
    s.polled(true)
    expect(s.next(false)).toBe(10_000)
    advance(9_999)
    expect(s.next(false)).toBe(1)
    advance(1)
    expect(s.next(false)).toBe('poll')
  })

  it('polls again after ErrorDelay when a poll failed', () => {
    const { s, advance } = schedule()
    s.polled(false)
    expect(s.next(false)).toBe(30_000)
    advance(30_000)
    expect(s.next(false)).toBe('poll')
  })

  it('Realtime=1: uploads as soon as a record is pending; a poll that is due goes first', () => {
    const { s } = schedule()
    expect(s.next(true)).toBe('poll')
    s.polled(true)
    expect(s.next(true)).toBe('upload')
  })

  it('after a failed upload, waits ErrorDelay, polling meanwhile when a poll falls due', () => {
    const { s, advance } = schedule({ delayMs: 25_000 })
    s.polled(true)
    s.uploadFailed()
    expect(s.next(true)).toBe(25_000)
    advance(25_000)
    expect(s.next(true)).toBe('poll')
    s.polled(true)
    expect(s.next(true)).toBe(5_000)
    advance(5_000)
    expect(s.next(true)).toBe('upload')
  })

  it('Realtime=0: uploads every TransInterval, everything pending, then waits for the next', () => {
    const { s, advance } = schedule({ realtime: false, delayMs: 1_000_000 })
    s.polled(true)
    expect(s.next(true)).toBe(60_000)
    advance(60_000)
    expect(s.next(true)).toBe('upload')
    // Still records to send: the upload goes on until none are left.
    expect(s.next(true)).toBe('upload')
    expect(s.next(false)).toBe(940_000)
    expect(s.next(true)).toBe(60_000)
  })

  it('Realtime=0: a LOG command uploads now', () => {
    const { s } = schedule({ realtime: false, delayMs: 1_000_000 })
    s.polled(true)
    s.requestUpload()
    expect(s.next(true)).toBe('upload')
    expect(s.next(false)).toBe(1_000_000)
    expect(s.next(true)).toBe(60_000)
  })

  it('a wakeable wait ends on wake(), any wait on interrupt()', async () => {
    const { s } = schedule()
    const woken = s.nap(3_600_000, true)
    s.wake()
    await woken
    const held = s.nap(3_600_000, false)
    s.wake()
    let done = false
    void held.then(() => {
      done = true
    })
    await Promise.resolve()
    expect(done).toBe(false)
    s.interrupt()
    await held
  })
})
