/**
 * The spool's bookkeeping as the forwarder and status use it: running totals and the oldest chunk
 * that stay right through appends and removals in any order, the index rebuilt in sequence order
 * at open, and runs of consecutive small chunks handed out for one batch request.
 */
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { Spool } from '../../../agent/spool/spool.js'

const log = pino({ level: 'silent' })

function punch(i: number): SpooledPunch {
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: `E${i % 50}`,
    punchType: i % 2 ? 'OUT' : 'IN',
    punchedAt: '2026-11-21T09:00:00+05:30',
    receivedAt: '2026-11-21T03:30:00.000000Z',
  }
}

/** A chunk file as the spool writes it, put there directly (as a spool left by an earlier run). */
async function writeChunk(dir: string, seq: number, items: SpooledPunch[], mtimeSeconds: number) {
  const file = join(dir, `chunk-${String(seq).padStart(16, '0')}-${items.length}.json`)
  const text = JSON.stringify({ kind: 'chunk', version: 1, seq, items })
  await writeFile(file, text)
  await utimes(file, mtimeSeconds, mtimeSeconds)
  return Buffer.byteLength(text)
}

describe('the spool index', () => {
  let dir: string
  const open = async (chunkPunches = 1) => {
    const spool = new Spool({ dir, maxBytes: 1 << 30, chunkPunches, log, events: new EventBus(log) })
    await spool.start()
    return spool
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-spool-index-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('rebuilds sequence order at open, whatever order the directory lists, with totals and the oldest', async () => {
    await mkdir(dir, { recursive: true })
    // Written newest first, and with the oldest chunk the latest file time: order is by sequence.
    let bytes = 0
    for (const seq of [40, 7, 12, 3, 25])
      bytes += await writeChunk(dir, seq, [punch(seq), punch(seq + 100)], 1_700_000_000 + seq)
    await utimes(join(dir, `chunk-${String(3).padStart(16, '0')}-2.json`), 1_600_000_000, 1_600_000_000)
    const spool = await open()
    expect([...spool.pending()].map((ref) => ref.seq)).toEqual([3, 7, 12, 25, 40])
    expect(spool.stats()).toMatchObject({ chunks: 5, items: 10, bytes, oldestWrittenAt: 1_600_000_000_000 })
    // New chunks follow the highest sequence number found.
    await spool.append([punch(999)])
    expect([...spool.pending()].at(-1)?.seq).toBe(41)
  })

  it('keeps its totals and oldest chunk right through removals in any order', async () => {
    const spool = await open(2)
    for (let i = 0; i < 12; i++) await spool.append([punch(i), punch(i + 100)].slice(0, 1 + (i % 2)))
    const refs = [...spool.pending()]
    expect(refs.map((ref) => ref.count)).toEqual([1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2])
    const sizes = new Map(refs.map((ref) => [ref.seq, ref]))
    const removeOrder = [5, 0, 11, 1, 6, 2, 3, 10, 4, 9, 8, 7].map((i) => refs[i] as (typeof refs)[number])
    const left = new Set(refs.map((ref) => ref.seq))
    for (const ref of removeOrder) {
      await spool.remove([ref])
      left.delete(ref.seq)
      const remaining = [...left].sort((a, b) => a - b).map((seq) => sizes.get(seq) as (typeof refs)[number])
      expect(spool.stats()).toMatchObject({
        chunks: remaining.length,
        items: remaining.reduce((sum, r) => sum + r.count, 0),
        bytes: remaining.reduce((sum, r) => sum + r.bytes, 0),
        oldestWrittenAt: remaining[0]?.writtenAt,
      })
      expect([...spool.pending()].map((r) => r.seq)).toEqual(remaining.map((r) => r.seq))
    }
    // Every chunk gone; the spool's format marker stays (spool-format.ts).
    expect(await readdir(dir)).toEqual(['format.json'])
  })

  it('hands out consecutive small chunks for one batch, after a given chunk, up to the batch size', async () => {
    const spool = await open()
    for (let i = 0; i < 10; i++) await spool.append([punch(i)])
    const first = spool.nextRun(0, 4)
    expect(first.map((ref) => ref.seq)).toEqual([1, 2, 3, 4])
    expect(spool.nextRun(4, 4).map((ref) => ref.seq)).toEqual([5, 6, 7, 8])
    // A chunk removed from the middle is skipped, not waited for.
    await spool.remove(spool.nextRun(5, 1))
    expect(spool.nextRun(4, 4).map((ref) => ref.seq)).toEqual([5, 7, 8, 9])
    expect(spool.nextRun(9, 4).map((ref) => ref.seq)).toEqual([10])
    expect(spool.nextRun(10, 4)).toEqual([])
  })

  it('hands out a chunk bigger than the batch size alone, and never splits one', async () => {
    const spool = await open(5)
    await spool.append([punch(1), punch(2)])
    await spool.append([punch(3), punch(4), punch(5), punch(6), punch(7)])
    await spool.append([punch(8)])
    expect(spool.nextRun(0, 3).map((ref) => ref.count)).toEqual([2])
    expect(spool.nextRun(1, 3).map((ref) => ref.count)).toEqual([5])
    expect(spool.nextRun(2, 3).map((ref) => ref.count)).toEqual([1])
  })

  it('can be walked while chunks are added and removed', async () => {
    const spool = await open()
    for (let i = 0; i < 5; i++) await spool.append([punch(i)])
    const seen: number[] = []
    for (const ref of spool.pending()) {
      seen.push(ref.seq)
      if (ref.seq === 2) {
        await spool.remove(spool.nextRun(2, 1))
        await spool.append([punch(50)])
      }
    }
    expect(seen).toEqual([1, 2, 4, 5, 6])
  })

  it('removes the files of a batch together, and leaves a quarantined chunk to the operator', async () => {
    const spool = await open()
    for (let i = 0; i < 4; i++) await spool.append([punch(i)])
    const refs = spool.nextRun(0, 10)
    const corrupt = refs[1] as (typeof refs)[number]
    await writeFile(corrupt.file, '{"kind":"chunk"')
    await expect(spool.read(corrupt)).rejects.toThrow()
    await spool.remove(refs)
    expect((await readdir(dir)).sort()).toEqual(['format.json', 'quarantine'])
    expect(await readdir(join(dir, 'quarantine'))).toHaveLength(1)
    expect(spool.stats()).toMatchObject({ chunks: 0, items: 0, bytes: 0, quarantined: 1 })
  })
})
