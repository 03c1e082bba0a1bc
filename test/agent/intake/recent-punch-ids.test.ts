import { describe, expect, it } from 'vitest'
import { RecentPunchIds } from '../../../agent/intake/recent-punch-ids.js'
import { punchId } from '../../../agent/punch/punch-id.js'

/** A real punch id for each name. */
const id = (name: string) => punchId('gate-1', name, 1_795_672_808_000_000, 'IN')

describe('the ids of punches stored lately', () => {
  it('remembers up to its capacity, forgetting the oldest first', () => {
    const recent = new RecentPunchIds(3)
    for (const name of ['a', 'b', 'c']) recent.add(id(name))
    expect(['a', 'b', 'c'].map((name) => recent.has(id(name)))).toEqual([true, true, true])
    recent.add(id('d'))
    expect(['a', 'b', 'c', 'd'].map((name) => recent.has(id(name)))).toEqual([false, true, true, true])
    recent.add(id('e'))
    recent.add(id('f'))
    expect(['b', 'c', 'd', 'e', 'f'].map((name) => recent.has(id(name)))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ])
    expect(recent.size).toBe(3)
  })

  it('keeps an id seen again where it was (a resend does not make it younger)', () => {
    const recent = new RecentPunchIds(2)
    recent.add(id('a'))
    recent.add(id('b'))
    recent.add(id('a'))
    recent.add(id('c'))
    expect([recent.has(id('a')), recent.has(id('b')), recent.has(id('c'))]).toEqual([false, true, true])
  })

  it('stays within its capacity over many more ids than it holds', () => {
    const recent = new RecentPunchIds(1000)
    for (let i = 0; i < 100_000; i++) recent.add(id(`E${i}`))
    expect(recent.size).toBe(1000)
    expect(recent.has(id('E98999'))).toBe(false)
    expect(recent.has(id('E99000'))).toBe(true)
  })

  it('tells different punches apart', () => {
    const recent = new RecentPunchIds(100_000)
    for (let i = 0; i < 50_000; i++) recent.add(id(`E${i}`))
    let misses = 0
    for (let i = 50_000; i < 100_000; i++) if (recent.has(id(`E${i}`))) misses++
    expect(misses).toBe(0)
  })
})
