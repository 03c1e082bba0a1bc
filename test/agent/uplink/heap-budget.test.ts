import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { heapBudgetWarning, punchesInHandAtMost } from '../../../agent/uplink/heap-budget.js'
import { serviceNodeFlags } from '../../bench/agent-service-flags.js'

/** The heap node allows with the flags of deploy/hajri-agent.service, as shipped. */
const unitHeapLimit = Number(
  execFileSync(process.execPath, [
    ...serviceNodeFlags(),
    '-p',
    "require('node:v8').getHeapStatistics().heap_size_limit",
  ]).toString(),
)
const DEFAULTS = { concurrency: 2, batchSize: 500, chunkPunches: 500 }

describe('the heap the forwarder needs', () => {
  it('counts twice `concurrency` batches and a chunk, or `concurrency` chunks when they are bigger', () => {
    expect(punchesInHandAtMost(DEFAULTS)).toBe(2 * 2 * 500 + 500)
    expect(punchesInHandAtMost({ concurrency: 4, batchSize: 500, chunkPunches: 10_000 })).toBe(40_000)
  })

  it("says nothing for the defaults, or the most requests in flight, under the service unit's heap limit", () => {
    expect(unitHeapLimit).toBeGreaterThan(0)
    expect(heapBudgetWarning(DEFAULTS, unitHeapLimit)).toBeUndefined()
    expect(heapBudgetWarning({ ...DEFAULTS, concurrency: 16 }, unitHeapLimit)).toBeUndefined()
  })

  it('says what to raise, and to what, when the settings need more than node allows', () => {
    const settings = { concurrency: 16, batchSize: 500, chunkPunches: 10_000 }
    // 32 MB for the rest of the agent, and 160,000 punches at 1 KB.
    expect(heapBudgetWarning(settings, 67 * 2 ** 20)).toBe(
      'cloud.concurrency 16 x spool.chunkPunches 10000 may need about 189 MB of heap while a backlog ' +
        'drains, and node allows 67 MB: raise --max-old-space-size in the service file to 189, or lower those settings',
    )
    expect(heapBudgetWarning(settings, unitHeapLimit)).toMatch(/^cloud\.concurrency 16 x /)
    // Node's own limit on a big machine: nothing to say.
    expect(heapBudgetWarning(settings, 4096 * 2 ** 20)).toBeUndefined()
  })
})
