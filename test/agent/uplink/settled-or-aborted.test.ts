import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { settledOrAborted } from '../../../agent/uplink/settled-or-aborted.js'
import { collectGarbage } from '../../support/collect-garbage.js'

const never = new Promise<void>(() => {})

/** Full collections, with turns of the event loop between them for finalizers to run. */
async function collectAndFinalize(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    collectGarbage()
    await new Promise((resolve) => setTimeout(resolve, 0))
  }
}

describe('settledOrAborted', () => {
  it('resolves when the work settles, fulfilled or rejected, and leaves no listener on the signal', async () => {
    const controller = new AbortController()
    await settledOrAborted(Promise.resolve('done'), controller.signal)
    await settledOrAborted(Promise.reject(new Error('failed')), controller.signal)
    // A loop's signal lives as long as the agent: a listener left per wait would grow without end.
    for (let i = 0; i < 1000; i++) await settledOrAborted(Promise.resolve(i), controller.signal)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('resolves when the signal aborts, though the work never settles', async () => {
    const controller = new AbortController()
    let resolved = false
    const waiting = settledOrAborted(never, controller.signal).then(() => {
      resolved = true
    })
    await new Promise((resolve) => setImmediate(resolve))
    expect(resolved).toBe(false)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    controller.abort()
    await waiting
    expect(resolved).toBe(true)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('resolves at once on a signal already aborted', async () => {
    await expect(settledOrAborted(never, AbortSignal.abort())).resolves.toBeUndefined()
  })

  it('frees each wait once it is over, unlike a race against one long-lived promise', async () => {
    // What the forwarder did: Promise.race([work, stopped]) once per batch, `stopped` pending for
    // the agent's life. Each wait's promise is held by `stopped` until it settles; ours are not.
    const stopped = new Promise<void>(() => {})
    const controller = new AbortController()
    const freed = new Set<string>()
    const raced = new FinalizationRegistry<string>((name) => freed.add(name))
    for (let i = 0; i < 50; i++) {
      const r = Promise.race([Promise.resolve(), stopped])
      raced.register(r, `race ${i}`)
      await r
      const s = settledOrAborted(Promise.resolve(), controller.signal)
      raced.register(s, `ours ${i}`)
      await s
    }
    await collectAndFinalize()
    expect([...freed].filter((name) => name.startsWith('race'))).toEqual([])
    // All but the last few, which this async function's own frame may still hold.
    expect([...freed].filter((name) => name.startsWith('ours')).length).toBeGreaterThanOrEqual(45)
  })
})
