import { describe, expect, it } from 'vitest'
import { pairPunches } from '../../../../../cloud/features/attendance/engine/pair-punches.js'
import type { EnginePunch } from '../../../../../cloud/features/attendance/engine/types.js'
import { day, idsWithRole, ist, MINUTE, policy, punch } from './engine-fixtures.js'

const DATE = '2026-03-10'
const ANCHOR = ist(`${DATE} 17:00`)

/** A punch `minutesBefore` the 17:00 anchor. */
function ago(id: string, punchType: 'IN' | 'OUT', minutesBefore: number): EnginePunch {
  return { id, punchType, punchedAt: ANCHOR - minutesBefore * MINUTE }
}

describe('working hours from a day of punches (cases after a known HR system test)', () => {
  // Five punches at -390, -300, -270, -90 and 0 minutes. Taken first to last they span 390
  // minutes; paired in turn, (-390,-300) and (-270,-90) make 90 + 180 = 270 and the fifth has no
  // partner. FIRST_LAST reads directions, so the first is an IN and the last an OUT; the three
  // between may say anything.
  const times = [390, 300, 270, 90, 0]

  it('FIRST_LAST spans the first IN to the last OUT: 390 minutes, whatever the punches between say', () => {
    for (let mask = 0; mask < 8; mask++) {
      const middle = [0, 1, 2].map((bit) => ((mask >> bit) & 1 ? 'IN' : 'OUT') as 'IN' | 'OUT')
      const types: ('IN' | 'OUT')[] = ['IN', ...middle, 'OUT']
      const punches = times.map((t, i) => ago(`u${i}`, types[i]!, t))
      const d = day(DATE, punches, { policy: policy({ pairing: 'FIRST_LAST' }) })
      expect(d.workedMinutes, `directions ${types.join(',')}`).toBe(390)
      expect(d.pairs).toEqual([{ in: ANCHOR - 390 * MINUTE, out: ANCHOR, minutes: 390 }])
    }
  })

  it('ALTERNATE ignores directions and pairs in turn: 270 minutes, and the unpaired fifth punch leaves the day INCOMPLETE', () => {
    // All five sent as IN, as a terminal in AUTO mode would.
    const punches = times.map((t, i) => ago(`u${i}`, 'IN', t))
    const d = day(DATE, punches, { policy: policy({ pairing: 'ALTERNATE' }) })
    expect(d.workedMinutes).toBe(270)
    expect(d.pairs.map((p) => p.minutes)).toEqual([90, 180, 0])
    expect(d.status).toBe('INCOMPLETE')
    expect(d.flags).toContain('MISSING_OUT')
  })

  // Typed punches: OUT-390, IN-360, OUT-300, IN-290, OUT-260, IN-240, IN-150, OUT-60.
  const typed = [
    ago('t1', 'OUT', 390),
    ago('t2', 'IN', 360),
    ago('t3', 'OUT', 300),
    ago('t4', 'IN', 290),
    ago('t5', 'OUT', 260),
    ago('t6', 'IN', 240),
    ago('t7', 'IN', 150),
    ago('t8', 'OUT', 60),
  ]

  it('FIRST_LAST on typed punches: first IN (-360) to last OUT (-60) is 300 minutes', () => {
    const d = day(DATE, typed, { policy: policy({ pairing: 'FIRST_LAST' }) })
    expect(d.workedMinutes).toBe(300)
    expect(idsWithRole(d, 'IN')).toEqual(['t2'])
    expect(idsWithRole(d, 'OUT')).toEqual(['t8'])
    // The leading OUT closes nothing.
    expect(d.flags).toContain('ORPHAN_OUT')
  })

  it('TOLERANT on typed punches: 60 + 30 + 180 = 270 minutes; the leading OUT is an orphan, the IN at -150 a double IN', () => {
    const d = day(DATE, typed, { policy: policy({ pairing: 'TOLERANT' }) })
    expect(d.workedMinutes).toBe(270)
    expect(d.pairs.map((p) => p.minutes)).toEqual([60, 30, 180])
    expect(d.breakMinutes).toBe(30)
    expect(idsWithRole(d, 'IGNORED')).toEqual(['t1'])
    expect(idsWithRole(d, 'DUPLICATE')).toEqual(['t7'])
    expect(d.flags).toEqual(expect.arrayContaining(['ORPHAN_OUT', 'DOUBLE_IN']))
  })
})

describe('pairPunches', () => {
  const at = (id: string, punchType: 'IN' | 'OUT', hhmmss: string): EnginePunch => ({
    id,
    punchType,
    punchedAt: ist(`${DATE} ${hhmmss}`),
  })

  it('counts a punch re-sent with the same id once', () => {
    const a = at('a', 'IN', '08:00:00')
    const b = at('b', 'OUT', '17:00:00')
    const paired = pairPunches([b, a, a, b, a], policy())
    expect(paired.punches.map((p) => [p.id, p.role])).toEqual([
      ['a', 'IN'],
      ['b', 'OUT'],
    ])
    expect(paired.pairs).toHaveLength(1)
  })

  it('collapses punches of one direction within the duplicate window (inclusive), and keeps the first', () => {
    const paired = pairPunches(
      [
        at('a', 'IN', '08:00:00'),
        at('b', 'IN', '08:02:00'),
        at('c', 'IN', '08:04:01'),
        at('d', 'OUT', '17:00:00'),
      ],
      policy({ duplicateWindowSeconds: 120 }),
    )
    // b is 120 s after a: a repeat. c is 241 s after a, the last kept IN: kept, and a double IN.
    expect(paired.punches.map((p) => p.role)).toEqual(['IN', 'DUPLICATE', 'DUPLICATE', 'OUT'])
    expect(paired.flags).toEqual(['DOUBLE_IN'])
    expect(paired.pairs).toEqual([{ in: ist(`${DATE} 08:00`), out: ist(`${DATE} 17:00`) }])
  })

  it('does not collapse punches of opposite directions, except under ALTERNATE', () => {
    const punches = [at('a', 'IN', '08:00:00'), at('b', 'OUT', '08:01:00')]
    expect(pairPunches(punches, policy()).pairs).toHaveLength(1)
    const alternate = pairPunches(punches, policy({ pairing: 'ALTERNATE' }))
    expect(alternate.punches.map((p) => p.role)).toEqual(['IN', 'DUPLICATE'])
    expect(alternate.flags).toEqual(['MISSING_OUT'])
  })

  it('gives every punch a role and reports a missing IN under FIRST_LAST', () => {
    const paired = pairPunches(
      [at('a', 'OUT', '12:00:00'), at('b', 'OUT', '17:00:00')],
      policy({ pairing: 'FIRST_LAST' }),
    )
    expect(paired.punches.map((p) => p.role)).toEqual(['IGNORED', 'OUT'])
    expect(paired.pairs).toEqual([{ in: null, out: ist(`${DATE} 17:00`) }])
    expect(paired.flags).toEqual(['MISSING_IN'])
  })

  it('breaks a tie in time by id, so the order of arrival never matters', () => {
    const x = at('x', 'IN', '08:00:00')
    const y = { ...at('y', 'OUT', '08:00:00') }
    expect(pairPunches([x, y], policy())).toEqual(pairPunches([y, x], policy()))
  })

  it('keeps the first IN of IN, IN + 2 min, OUT + 9 h: a whole day, not two minutes', () => {
    const d = day(DATE, [
      punch('IN', `${DATE} 08:00`, 'i1'),
      punch('IN', `${DATE} 08:02`, 'i2'),
      punch('OUT', `${DATE} 17:00`, 'o1'),
    ])
    expect(d.workedMinutes).toBe(540)
    expect(d.status).toBe('PRESENT')
    expect(idsWithRole(d, 'DUPLICATE')).toEqual(['i2'])
    // With no duplicate window, the second IN is a double IN: still a whole day.
    const strict = day(
      DATE,
      [
        punch('IN', `${DATE} 08:00`, 'i1'),
        punch('IN', `${DATE} 08:02`, 'i2'),
        punch('OUT', `${DATE} 17:00`, 'o1'),
      ],
      { policy: policy({ duplicateWindowSeconds: 0 }) },
    )
    expect(strict.workedMinutes).toBe(540)
    expect(strict.status).toBe('PRESENT')
    expect(strict.flags).toContain('DOUBLE_IN')
    expect(idsWithRole(strict, 'DUPLICATE')).toEqual(['i2'])
  })
})
