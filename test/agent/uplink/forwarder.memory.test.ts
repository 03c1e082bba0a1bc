/**
 * The forwarder runs for months: what it keeps per wait must not add up. Its loop waits once per
 * batch, and once per idle second; a wait that left anything behind (a reaction on a promise that
 * lives as long as the agent, as a race against one did) grew the heap by about 300 bytes each idle
 * wait. The heap is compared after full collections, so what is measured is what is still held.
 */
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { Spool } from '../../../agent/spool/spool.js'
import { Forwarder } from '../../../agent/uplink/forwarder.js'
import { collectGarbage } from '../../support/collect-garbage.js'

function heapAfterCollection(): number {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().heapUsed
}

const log = pino({ level: 'silent' })
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('the forwarder over a long run', () => {
  it('holds nothing more after 100,000 waits than after the first 10,000', async () => {
    let waits = 0
    // An empty spool whose wait for punches ends at the next turn, as if punches kept being
    // announced: the loop waits again and again, as fast as it can.
    const spool: Pick<Spool, 'nextRun' | 'read' | 'remove' | 'waitForPunches'> = {
      nextRun: () => [],
      read: () => Promise.reject(new Error('nothing was taken, so nothing is read')),
      remove: () => Promise.resolve(),
      waitForPunches: () => {
        waits++
        return turn()
      },
    }
    const forwarder = new Forwarder({
      spool,
      deadLetters: { add: () => Promise.resolve() },
      uplink: { send: () => Promise.reject(new Error('nothing is sent')) },
      events: new EventBus(log),
      log,
      concurrency: 2,
      batchSize: 500,
    })
    const waitsReach = async (n: number) => {
      while (waits < n) await turn()
    }
    forwarder.start()
    try {
      await waitsReach(10_000)
      const before = heapAfterCollection()
      await waitsReach(110_000)
      const after = heapAfterCollection()
      // Racing a promise as long-lived as the agent kept 31 MB over these 100,000 waits; waits
      // that leave nothing behind keep a few kB.
      expect((after - before) / 1e6).toBeLessThan(3)
    } finally {
      await forwarder.stop()
    }
  }, 120_000)
})
