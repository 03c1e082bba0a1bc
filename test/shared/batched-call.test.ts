import { describe, expect, it } from 'vitest'
import { BatchedCall } from '../../shared/batched-call.js'

describe('BatchedCall', () => {
  it('serves the calls of one turn in one run, those made during it in the next, each with its answer', async () => {
    const runs: number[][] = []
    let release: () => void = () => {}
    const batched = new BatchedCall<number, number>(async (inputs) => {
      runs.push(inputs)
      if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve))
      return inputs.map((n) => n * 10)
    })
    const first = [batched.call(1), batched.call(2)]
    await new Promise((resolve) => setImmediate(resolve))
    // The first run is under way: these wait for it, then go together.
    const later = [batched.call(3), batched.call(4), batched.call(5)]
    release()
    expect(await Promise.all([...first, ...later])).toEqual([10, 20, 30, 40, 50])
    expect(runs).toEqual([
      [1, 2],
      [3, 4, 5],
    ])
  })

  it('runs a lone call at once, and no more than its maximum together', async () => {
    const runs: number[][] = []
    const batched = new BatchedCall<number, number>(async (inputs) => {
      runs.push(inputs)
      return inputs
    }, 2)
    expect(await batched.call(7)).toBe(7)
    expect(await Promise.all([1, 2, 3].map((n) => batched.call(n)))).toEqual([1, 2, 3])
    expect(runs).toEqual([[7], [1, 2], [3]])
  })

  it('fails every call of a failed run, and serves the next run', async () => {
    let fail = true
    const batched = new BatchedCall<number, number>(async (inputs) => {
      if (fail) throw new Error('database gone')
      return inputs
    })
    const failed = await Promise.allSettled([batched.call(1), batched.call(2)])
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    fail = false
    expect(await batched.call(3)).toBe(3)
  })
})
