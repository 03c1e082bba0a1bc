import { describe, expect, it } from 'vitest'
import {
  advanceZkCursor,
  compareZkLog,
  EMPTY_ZK_CURSOR,
  findClockStepBack,
  ZK_CURSOR_OVERLAP,
  type ZkLogKeys,
} from '../../../../agent/inputs/zk/zk-log-cursor.js'

const keysOf = (list: readonly string[]): ZkLogKeys => ({ length: list.length, key: (i) => list[i] ?? '' })
const log = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `r${from + i}`)

describe('compareZkLog', () => {
  it('takes a whole log as new when there is no cursor', () => {
    expect(compareZkLog(EMPTY_ZK_CURSOR, keysOf(log(0, 5)))).toEqual({ from: 0, change: { kind: 'first' } })
  })

  it('takes what follows the cursor when the log has only grown, and nothing when it has not', () => {
    const cursor = advanceZkCursor(keysOf(log(0, 100)), 100, '2026-11-26T09:00:00')
    expect(cursor.tail).toHaveLength(ZK_CURSOR_OVERLAP)
    expect(compareZkLog(cursor, keysOf(log(0, 130)))).toEqual({ from: 100, change: { kind: 'grown' } })
    expect(compareZkLog(cursor, keysOf(log(0, 100)))).toEqual({ from: 100, change: { kind: 'grown' } })
  })

  it('finds the known records at a lower place when the device dropped its oldest ones', () => {
    const cursor = advanceZkCursor(keysOf(log(0, 100)), 100, undefined)
    // A full log of 100 that overwrote its 10 oldest with 10 new records.
    expect(compareZkLog(cursor, keysOf(log(10, 110)))).toEqual({
      from: 90,
      change: { kind: 'shifted', dropped: 10 },
    })
  })

  it('says the log was cleared when the known records are nowhere, and takes it all', () => {
    const cursor = advanceZkCursor(keysOf(log(0, 100)), 100, undefined)
    expect(compareZkLog(cursor, keysOf(log(500, 503)))).toEqual({
      from: 0,
      change: { kind: 'cleared', previousCount: 100 },
    })
    // Cleared and refilled past the old count: the count alone would have missed it.
    expect(compareZkLog(cursor, keysOf(log(500, 700))).change.kind).toBe('cleared')
  })

  it('does not mistake a log whose last known record alone survived for the same log', () => {
    const cursor = advanceZkCursor(keysOf(log(0, 100)), 100, undefined)
    const changed = [...log(0, 99), 'other']
    expect(compareZkLog(cursor, keysOf(changed)).change.kind).toBe('cleared')
  })

  it('keeps a short tail for a short log', () => {
    const cursor = advanceZkCursor(keysOf(log(0, 3)), 3, undefined)
    expect(cursor).toEqual({ count: 3, tail: ['r0', 'r1', 'r2'] })
    expect(compareZkLog(cursor, keysOf(log(0, 4)))).toEqual({ from: 3, change: { kind: 'grown' } })
  })
})

describe('findClockStepBack', () => {
  const times = ['2026-11-26T09:00:00', '2026-11-26T09:05:00', '2026-11-26T08:00:00', '2026-11-26T08:01:00']
  const at = (i: number) => times[i]

  it('finds where a record is older than the one before it by more than a minute', () => {
    expect(findClockStepBack(at, 0, times.length, undefined)).toEqual({
      index: 2,
      from: '2026-11-26T09:05:00',
      to: '2026-11-26T08:00:00',
    })
  })

  it('compares the first new record with the last one read before', () => {
    expect(findClockStepBack(at, 3, 4, '2026-11-26T10:00:00')?.index).toBe(3)
    expect(findClockStepBack(at, 3, 4, '2026-11-26T08:00:30')).toBeUndefined()
  })

  it('lets a clock step back a minute or less (drift corrections), and skips unreadable records', () => {
    const small = ['2026-11-26T09:00:00', undefined, '2026-11-26T08:59:00']
    expect(findClockStepBack((i) => small[i], 0, 3, undefined)).toBeUndefined()
  })
})
