/**
 * The spool's index (agent/spool/chunk-index.ts) against a model a reader can check by eye: a
 * plain array of chunks kept sorted. fast-check drives both with the same appends and removals,
 * in any order (the forwarder finishes batches out of order; quarantine removes from the middle),
 * in numbers that cross the compaction and growth thresholds, and every answer must agree.
 * Reproduce a failure with HAJRI_FUZZ_SEED=<seed printed by fast-check>.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ChunkIndex, type IndexedChunk } from '../../../agent/spool/chunk-index.js'

const SEED = process.env.HAJRI_FUZZ_SEED === undefined ? undefined : Number(process.env.HAJRI_FUZZ_SEED)
const RUNS = { numRuns: 60, ...(SEED === undefined ? {} : { seed: SEED }) }

type Op =
  | { kind: 'append'; chunks: number; count: number }
  | { kind: 'remove'; pick: number; howMany: number; fromFront: boolean }
  | { kind: 'removeAbsent'; seq: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    chunks: fc.integer({ min: 1, max: 1500 }),
    count: fc.integer({ min: 1, max: 600 }),
  }),
  fc.record({
    kind: fc.constant('remove' as const),
    pick: fc.nat(),
    howMany: fc.integer({ min: 1, max: 1500 }),
    fromFront: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('removeAbsent' as const), seq: fc.integer({ min: 0, max: 100_000 }) }),
)

function expectSame(index: ChunkIndex, model: IndexedChunk[]): void {
  expect(index.size).toBe(model.length)
  expect(index.items).toBe(model.reduce((sum, c) => sum + c.count, 0))
  expect(index.bytes).toBe(model.reduce((sum, c) => sum + c.bytes, 0))
  expect(index.first()).toEqual(model[0])
  expect([...index.from(0)]).toEqual(model)
}

describe('the chunk index', () => {
  it('agrees with a sorted array on totals, order, oldest and runs, whatever is removed when', () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 700 }),
        (ops, max) => {
          const index = new ChunkIndex()
          let model: IndexedChunk[] = []
          let seq = 0
          for (const o of ops) {
            if (o.kind === 'append') {
              for (let i = 0; i < o.chunks; i++) {
                seq += 1 + (i % 3 === 0 ? 1 : 0) // gaps, as failed group commits leave them
                const chunk = { seq, count: 1 + ((o.count + i) % 600), bytes: 100 + i, writtenAt: 1e12 + seq }
                index.add(chunk)
                model.push(chunk)
              }
            } else if (o.kind === 'remove') {
              for (let n = 0; n < o.howMany && model.length > 0; n++) {
                const at = o.fromFront ? 0 : (o.pick + n * 7919) % model.length
                const [gone] = model.splice(at, 1) as [IndexedChunk]
                expect(index.remove(gone.seq, gone.count)).toBe(true)
                // Removed already: a second removal changes nothing.
                expect(index.remove(gone.seq, gone.count)).toBe(false)
              }
            } else {
              const present = model.some((c) => c.seq === o.seq)
              if (!present) expect(index.remove(o.seq, 1)).toBe(false)
            }
            expectSame(index, model)
            // What the forwarder asks: the next consecutive chunks after a place, up to `max` items.
            const after = model[Math.floor(model.length / 2)]?.seq ?? 0
            const rest = model.filter((c) => c.seq > after)
            const expected: IndexedChunk[] = []
            let items = 0
            for (const c of rest) {
              if (expected.length > 0 && items + c.count > max) break
              expected.push(c)
              items += c.count
              if (items >= max) break
            }
            expect(index.run(after, max)).toEqual(expected)
            expect(index.after(after)).toEqual(rest[0])
          }
          model = []
        },
      ),
      RUNS,
    )
  })

  it('sorts chunks added out of order (a directory listing) into sequence order', () => {
    const index = new ChunkIndex()
    const seqs = Array.from({ length: 5000 }, (_, i) => i + 1).sort(() => Math.random() - 0.5)
    for (const seq of seqs) index.add({ seq, count: (seq % 4) + 1, bytes: seq, writtenAt: seq })
    index.sort()
    expect([...index.from(0)].map((c) => c.seq)).toEqual(Array.from({ length: 5000 }, (_, i) => i + 1))
    expect(index.first()).toEqual({ seq: 1, count: 2, bytes: 1, writtenAt: 1 })
    expect(index.lastSeq).toBe(5000)
  })

  it('tells apart two files with one sequence number by their item count', () => {
    const index = new ChunkIndex()
    index.add({ seq: 7, count: 2, bytes: 10, writtenAt: 1 })
    index.add({ seq: 7, count: 3, bytes: 20, writtenAt: 2 })
    index.sort()
    expect(index.has(7, 3)).toBe(true)
    expect(index.remove(7, 3)).toBe(true)
    expect(index.has(7, 3)).toBe(false)
    expect(index.has(7, 2)).toBe(true)
    expect({ size: index.size, items: index.items, bytes: index.bytes }).toEqual({
      size: 1,
      items: 2,
      bytes: 10,
    })
  })

  it('refuses a chunk of no items: a count of 0 is how a removed slot is marked', () => {
    expect(() => new ChunkIndex().add({ seq: 1, count: 0, bytes: 1, writtenAt: 1 })).toThrow(RangeError)
  })
})
