import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../agent/events.js'

let logged: { msg: string; event: string; err: { message: string } }[]
let events: EventBus
let unhandled: unknown[]
const noteUnhandled = (reason: unknown) => unhandled.push(reason)

beforeEach(() => {
  logged = []
  unhandled = []
  events = new EventBus(pino({ level: 'error' }, { write: (line: string) => logged.push(JSON.parse(line)) }))
  process.on('unhandledRejection', noteUnhandled)
})
afterEach(() => {
  process.off('unhandledRejection', noteUnhandled)
})

/** Long enough for a rejection nobody handles to be reported (Node checks after the microtasks). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe('EventBus', () => {
  it('hands each event to its listeners, and stops when one unsubscribes', () => {
    const seen: number[] = []
    const off = events.on('punchesForwarded', (e) => {
      seen.push(e.count)
    })
    events.emit('punchesForwarded', { count: 2 })
    off()
    events.emit('punchesForwarded', { count: 3 })
    expect(seen).toEqual([2])
  })

  it('logs a listener that throws, and the other listeners still run', () => {
    const seen: number[] = []
    events.on('punchesForwarded', () => {
      throw new Error('listener broke')
    })
    events.on('punchesForwarded', (e) => {
      seen.push(e.count)
    })
    expect(() => events.emit('punchesForwarded', { count: 1 })).not.toThrow()
    expect(seen).toEqual([1])
    expect(logged).toMatchObject([
      { msg: 'event listener failed', event: 'punchesForwarded', err: { message: 'listener broke' } },
    ])
  })

  it('logs an async listener that rejects, and the rejection does not escape', async () => {
    const seen: number[] = []
    events.on('forwardFailed', async () => {
      await Promise.resolve()
      throw new Error('async listener broke')
    })
    events.on('forwardFailed', (e) => {
      seen.push(e.retryInMs)
    })
    expect(() =>
      events.emit('forwardFailed', { error: 'the cloud answered 503', retryInMs: 500 }),
    ).not.toThrow()
    await settle()
    expect(seen).toEqual([500])
    expect(logged).toMatchObject([
      { msg: 'event listener failed', event: 'forwardFailed', err: { message: 'async listener broke' } },
    ])
    expect(unhandled).toEqual([])
  })
})
