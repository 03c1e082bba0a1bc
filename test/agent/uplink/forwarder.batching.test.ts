/**
 * How the forwarder turns a spool of small chunks into batch requests: consecutive chunks share a
 * request, their files are deleted together and only after the cloud has answered, only a few
 * batches are in hand at once whatever the backlog, and a failure on our own side (the disk) is
 * retried without sending or dead-lettering anything twice. A real spool in a temporary directory;
 * the cloud is a stand-in whose answers the test releases one by one.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import type { ChunkRef } from '../../../agent/spool/chunk-log.js'
import type { NewDeadLetter } from '../../../agent/spool/dead-letters.js'
import { Spool } from '../../../agent/spool/spool.js'
import { Forwarder } from '../../../agent/uplink/forwarder.js'
import type { PunchOutcome } from '../../../agent/uplink/punch-uplink.js'

const log = pino({ level: 'silent' })
const FAST = { baseMs: 5, capMs: 20, floorMs: 1 }

function punch(i: number): SpooledPunch {
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: `E${i}`,
    punchType: 'IN',
    punchedAt: '2026-11-21T09:00:00+05:30',
    receivedAt: '2026-11-21T03:30:00.000000Z',
  }
}

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5))
}

/** A request the test answers when it chooses. */
interface Call {
  punches: SpooledPunch[]
  answer: (outcomes?: PunchOutcome[]) => void
}

/** A cloud that holds every request until the test answers it (by default: all accepted). */
function heldCloud() {
  const calls: Call[] = []
  const uplink = {
    send: (punches: readonly SpooledPunch[], signal?: AbortSignal) =>
      new Promise<PunchOutcome[]>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('stopping')), { once: true })
        calls.push({
          punches: [...punches],
          answer: (outcomes) => resolve(outcomes ?? punches.map((p) => ({ punch: p, accepted: true }))),
        })
      }),
  }
  return { calls, uplink }
}

describe('forwarding a spool of small chunks', () => {
  let dir: string
  const stops: (() => Promise<void>)[] = []

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-batching-'))
  })
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop()
    await rm(dir, { recursive: true, force: true })
  })

  /** A spool of `count` one-punch chunks, as an outage at human pace leaves it. */
  async function spoolOfOnes(count: number, chunkPunches = 1) {
    const events = new EventBus(log)
    const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches, log, events })
    await spool.start()
    for (let i = 0; i < count; i++) await spool.append([punch(i)])
    stops.push(() => spool.stop())
    return { spool, events }
  }

  function forwarder(
    spool: Spool,
    events: EventBus,
    uplink: ReturnType<typeof heldCloud>['uplink'],
    options: {
      concurrency?: number
      batchSize?: number
      deadLetters?: (entries: NewDeadLetter[]) => Promise<void>
    } = {},
  ) {
    const f = new Forwarder({
      spool,
      deadLetters: { add: options.deadLetters ?? (async () => {}) },
      uplink,
      events,
      log,
      concurrency: options.concurrency ?? 2,
      batchSize: options.batchSize ?? 500,
      backoff: FAST,
    })
    stops.push(() => f.stop())
    return f
  }

  const chunkFiles = async () => (await readdir(dir)).filter((f) => f.startsWith('chunk-')).sort()

  it('sends consecutive small chunks in one request and deletes them all only after the cloud answers', async () => {
    const { spool, events } = await spoolOfOnes(7)
    const files = await chunkFiles()
    expect(files).toHaveLength(7)
    const removals: ChunkRef[][] = []
    const remove = spool.remove.bind(spool)
    spool.remove = async (refs) => {
      removals.push([...refs])
      await remove(refs)
    }
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink).start()
    await until(() => calls.length === 1)
    expect(calls[0]?.punches.map((p) => p.id)).toEqual(Array.from({ length: 7 }, (_, i) => punch(i).id))
    // The request is in flight: every chunk is still on disk, and in the index.
    expect(await chunkFiles()).toEqual(files)
    expect(spool.stats().items).toBe(7)
    calls[0]?.answer()
    await until(() => spool.stats().items === 0)
    expect(await chunkFiles()).toEqual([])
    // All seven in one removal: one directory fsync for the batch.
    expect(removals.map((r) => r.length)).toEqual([7])
    expect(calls).toHaveLength(1)
  })

  it('fills each request up to the batch size, across as many chunks as that takes', async () => {
    const { spool, events } = await spoolOfOnes(10)
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, { batchSize: 4, concurrency: 1 }).start()
    for (let call = 1; call <= 3; call++) {
      await until(() => calls.length === call)
      calls.at(-1)?.answer()
    }
    await until(() => spool.stats().items === 0)
    expect(calls.map((c) => c.punches.length)).toEqual([4, 4, 2])
    expect(calls.flatMap((c) => c.punches.map((p) => p.id))).toEqual(
      Array.from({ length: 10 }, (_, i) => punch(i).id),
    )
  })

  it('sends a chunk bigger than a batch in several requests and deletes it after the last', async () => {
    const events = new EventBus(log)
    const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches: 10, log, events })
    await spool.start()
    stops.push(() => spool.stop())
    await spool.append(Array.from({ length: 10 }, (_, i) => punch(i)))
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, { batchSize: 4 }).start()
    for (let call = 1; call <= 3; call++) {
      await until(() => calls.length === call)
      expect(await chunkFiles()).toHaveLength(1)
      calls.at(-1)?.answer()
    }
    await until(() => spool.stats().items === 0)
    expect(calls.map((c) => c.punches.length)).toEqual([4, 4, 2])
    expect(await chunkFiles()).toEqual([])
  })

  it('dead-letters exactly the punches a batch answer rejects, and deletes every chunk of the batch', async () => {
    const { spool, events } = await spoolOfOnes(6)
    const parked: NewDeadLetter[] = []
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, {
      deadLetters: async (entries) => {
        parked.push(...entries)
      },
    }).start()
    await until(() => calls.length === 1)
    const call = calls[0] as Call
    const problem = { status: 422, code: 'employee_not_found', detail: 'No employee E4.' }
    call.answer(
      call.punches.map((p, i) =>
        i === 1 || i === 4 ? { punch: p, accepted: false, problem } : { punch: p, accepted: true },
      ),
    )
    await until(() => spool.stats().items === 0)
    expect(parked.map((d) => d.punch?.id)).toEqual([punch(1).id, punch(4).id])
    expect(parked.every((d) => d.reason === 'rejected_by_cloud' && d.problem === problem)).toBe(true)
    expect(await chunkFiles()).toEqual([])
  })

  it('keeps no more batches in hand than it sends plus as many waiting, whatever the backlog', async () => {
    const concurrency = 2
    const { spool, events } = await spoolOfOnes(60)
    // Count the chunks taken from the spool and not yet done with, at every step of the drain.
    let inHand = 0
    let mostInHand = 0
    const nextRun = spool.nextRun.bind(spool)
    spool.nextRun = (after, max) => {
      const run = nextRun(after, max)
      inHand += run.length
      mostInHand = Math.max(mostInHand, inHand)
      return run
    }
    const remove = spool.remove.bind(spool)
    spool.remove = async (refs) => {
      await remove(refs)
      inHand -= refs.length
    }
    const { calls, uplink } = heldCloud()
    const f = forwarder(spool, events, uplink, { concurrency, batchSize: 1 })
    f.start()
    await until(() => calls.length === concurrency)
    // The cloud answers nothing yet: give the loop every chance to take more than it should.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(calls).toHaveLength(concurrency)
    expect(f.inHand).toBe(2 * concurrency)
    expect(inHand).toBe(2 * concurrency)
    // Answer everything as it comes: the bound holds all the way down.
    let answered = 0
    while (spool.stats().items > 0) {
      const open = calls.slice(answered)
      answered = calls.length
      for (const call of open) call.answer()
      await new Promise((resolve) => setTimeout(resolve, 1))
      expect(f.inHand).toBeLessThanOrEqual(2 * concurrency)
    }
    expect(mostInHand).toBe(2 * concurrency)
    // Each punch sent once (two requests in flight may reach the cloud in either order).
    expect(calls.flatMap((c) => c.punches.map((p) => p.id)).sort()).toEqual(
      Array.from({ length: 60 }, (_, i) => punch(i).id),
    )
  })

  it('reads the next batch while a request is in flight, and takes no more than that', async () => {
    const { spool, events } = await spoolOfOnes(8)
    const reads: number[] = []
    const read = spool.read.bind(spool)
    spool.read = async (ref) => {
      reads.push(ref.seq)
      return read(ref)
    }
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, { concurrency: 1, batchSize: 2 }).start()
    await until(() => calls.length === 1)
    // The cloud holds the first batch (chunks 1 and 2); the second is read from disk meanwhile, so
    // its request can go the moment the first is answered.
    await until(() => reads.includes(3) && reads.includes(4))
    expect(calls).toHaveLength(1)
    expect(reads.sort()).toEqual([1, 2, 3, 4])
    let answered = 0
    while (spool.stats().items > 0) {
      for (const call of calls.slice(answered)) call.answer()
      answered = calls.length
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    expect(calls.map((c) => c.punches.length)).toEqual([2, 2, 2, 2])
  })

  it('sends batches oldest first even when a younger one is read sooner', async () => {
    const { spool, events } = await spoolOfOnes(4)
    // The first chunk's read is held until the second batch (chunks 3 and 4) has been read.
    let releaseFirst = () => {}
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve
    })
    const readDone: number[] = []
    const read = spool.read.bind(spool)
    spool.read = async (ref) => {
      if (ref.seq === 1) await firstHeld
      const punches = await read(ref)
      readDone.push(ref.seq)
      return punches
    }
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, { concurrency: 1, batchSize: 2 }).start()
    await until(() => readDone.includes(3) && readDone.includes(4))
    // The younger batch is in hand and read, and still waits for the older one.
    expect(calls).toHaveLength(0)
    releaseFirst()
    await until(() => calls.length === 1)
    expect(calls[0]?.punches.map((p) => p.id)).toEqual([punch(0).id, punch(1).id])
    calls[0]?.answer()
    await until(() => calls.length === 2)
    expect(calls[1]?.punches.map((p) => p.id)).toEqual([punch(2).id, punch(3).id])
    calls[1]?.answer()
    await until(() => spool.stats().items === 0)
  })

  it('does not read ahead chunks bigger than a batch: memory stays within `concurrency` of them', async () => {
    const events = new EventBus(log)
    const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches: 10, log, events })
    await spool.start()
    stops.push(() => spool.stop())
    for (let c = 0; c < 6; c++) await spool.append(Array.from({ length: 10 }, (_, i) => punch(c * 10 + i)))
    const { calls, uplink } = heldCloud()
    const f = forwarder(spool, events, uplink, { concurrency: 2, batchSize: 4 })
    f.start()
    await until(() => calls.length === 2)
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    // Two chunks of 10 in hand, each sending its first 4: none read ahead.
    expect(f.inHand).toBe(2)
    let answered = 0
    while (spool.stats().items > 0) {
      for (const call of calls.slice(answered)) call.answer()
      answered = calls.length
      await new Promise((resolve) => setTimeout(resolve, 1))
      expect(f.inHand).toBeLessThanOrEqual(2)
    }
    expect(calls.flatMap((c) => c.punches.map((p) => p.id)).sort()).toEqual(
      Array.from({ length: 60 }, (_, i) => punch(i).id).sort(),
    )
  })

  it('retries a failed dead-letter write without sending the batch again or parking a punch twice', async () => {
    const { spool, events } = await spoolOfOnes(3)
    const parked: NewDeadLetter[] = []
    let attempts = 0
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, {
      deadLetters: async (entries) => {
        attempts++
        if (attempts === 1) throw Object.assign(new Error('no space'), { code: 'ENOSPC' })
        parked.push(...entries)
      },
    }).start()
    await until(() => calls.length === 1)
    const call = calls[0] as Call
    call.answer(
      call.punches.map((p, i) =>
        i === 2 ? { punch: p, accepted: false, problem: { status: 422 } } : { punch: p, accepted: true },
      ),
    )
    await until(() => spool.stats().items === 0)
    expect(attempts).toBe(2)
    expect(parked.map((d) => d.punch?.id)).toEqual([punch(2).id])
    expect(calls).toHaveLength(1)
  })

  it('retries a failed removal and keeps the chunks until it succeeds', async () => {
    const { spool, events } = await spoolOfOnes(3)
    const remove = spool.remove.bind(spool)
    let failures = 1
    spool.remove = async (refs) => {
      if (failures-- > 0) throw Object.assign(new Error('I/O error'), { code: 'EIO' })
      await remove(refs)
    }
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink).start()
    await until(() => calls.length === 1)
    calls[0]?.answer()
    await until(() => spool.stats().items === 0)
    expect(failures).toBe(-1)
    expect(calls).toHaveLength(1)
    expect(await chunkFiles()).toEqual([])
  })

  it('sends a batch again after a failure no step of its own retries, not leaving it to a restart', async () => {
    const { spool, events } = await spoolOfOnes(3)
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink).start()
    await until(() => calls.length === 1)
    // An answer the forwarder cannot use (a defect of ours, say): its batch fails as a whole. The
    // forwarder has moved on past those chunks, and must come back to them.
    calls[0]?.answer('not outcomes' as unknown as PunchOutcome[])
    await until(() => calls.length === 2)
    expect(calls[1]?.punches.map((p) => p.id)).toEqual([0, 1, 2].map((i) => punch(i).id))
    calls[1]?.answer()
    await until(() => spool.stats().items === 0)
    expect(await chunkFiles()).toEqual([])
  })

  it('picks up chunks spooled while it runs, after those it has taken, each once', async () => {
    const { spool, events } = await spoolOfOnes(3)
    const { calls, uplink } = heldCloud()
    forwarder(spool, events, uplink, { concurrency: 1 }).start()
    await until(() => calls.length === 1)
    await spool.append([punch(3)])
    await spool.append([punch(4)])
    let answered = 0
    while (spool.stats().items > 0) {
      for (const call of calls.slice(answered)) call.answer()
      answered = calls.length
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    expect(calls[0]?.punches.map((p) => p.id)).toEqual([0, 1, 2].map((i) => punch(i).id))
    // One request at a time: in spool order, none twice.
    expect(calls.flatMap((c) => c.punches.map((p) => p.id))).toEqual(
      Array.from({ length: 5 }, (_, i) => punch(i).id),
    )
  })
})
