import { describe, expect, it } from 'vitest'
import { attributePunches } from '../../../../../cloud/features/attendance/engine/attribute-punches.js'
import { shiftInstance } from '../../../../../cloud/features/attendance/engine/shift-instance.js'
import { days, ist, KOLKATA, policy, punch, shift } from './engine-fixtures.js'

describe('capture windows', () => {
  it('a 23:00–01:00 shift with hour-long windows captures 22:00 to 02:00 the next day, both ends included', () => {
    const instance = shiftInstance('2026-03-10', shift({ start: '23:00', end: '01:00' }), KOLKATA)
    expect(instance.scheduledStart).toBe(ist('2026-03-10 23:00'))
    expect(instance.scheduledEnd).toBe(ist('2026-03-11 01:00'))
    expect(instance.captureStart).toBe(ist('2026-03-10 22:00'))
    // captureEnd is exclusive: 1 µs past 02:00, the last instant counted.
    expect(instance.captureEnd).toBe(ist('2026-03-11 02:00') + 1)
  })

  it('an unscheduled date captures its local calendar day', () => {
    const instance = shiftInstance('2026-03-10', null, KOLKATA)
    expect([instance.scheduledStart, instance.scheduledEnd]).toEqual([null, null])
    expect(instance.captureStart).toBe(ist('2026-03-10 00:00'))
    expect(instance.captureEnd).toBe(ist('2026-03-11 00:00'))
  })

  it('00:30–10:00: a punch at 23:30 the day before belongs to the day the shift starts', () => {
    const early = shift({ start: '00:30', end: '10:00' })
    const [mon, tue] = days(
      ['2026-03-09', '2026-03-10'],
      [punch('IN', '2026-03-09 23:30', 'in'), punch('OUT', '2026-03-10 10:00', 'out')],
      { shiftFor: early },
    )
    expect(mon!.punches).toEqual([])
    expect(tue!.workDate).toBe('2026-03-10')
    expect(tue!.punches.map((p) => p.id)).toEqual(['in', 'out'])
    // Arriving an hour early is not work: 00:30–10:00.
    expect(tue!.workedMinutes).toBe(570)
  })
})

describe('consecutive shifts whose windows overlap', () => {
  it('08:00–12:00 then 12:30–16:30 with hour-long windows: 12:00 goes to the first, 12:01 to the second', () => {
    const first = shiftInstance('2026-03-10', shift({ code: 'AM', start: '08:00', end: '12:00' }), KOLKATA)
    const second = shiftInstance('2026-03-10', shift({ code: 'PM', start: '12:30', end: '16:30' }), KOLKATA)
    // The first shift's OUT and the second's IN, a minute apart.
    const noon = punch('OUT', '2026-03-10 12:00', 'noon')
    const past = punch('IN', '2026-03-10 12:01', 'past')
    const [a, b] = attributePunches([first, second], [past, noon], policy())
    expect(a!.punches.map((p) => p.id)).toEqual(['noon'])
    expect(b!.punches.map((p) => p.id)).toEqual(['past'])
    // The earlier shift keeps the instant of its end.
    expect(a!.captureEnd).toBe(ist('2026-03-10 12:00') + 1)
    expect(b!.captureStart).toBe(a!.captureEnd)
  })

  it('the same cut across dates: a 20:00–04:00 night, then a 04:30 start', () => {
    const shiftFor = (date: string) =>
      date === '2026-03-10'
        ? shift({ start: '20:00', end: '04:00' })
        : shift({ start: '04:30', end: '12:30' })
    const [night, morning] = days(
      ['2026-03-10', '2026-03-11'],
      [
        punch('IN', '2026-03-10 20:00', 'n-in'),
        punch('OUT', '2026-03-11 04:00', 'n-out'),
        punch('IN', '2026-03-11 04:01', 'm-in'),
        punch('OUT', '2026-03-11 12:30', 'm-out'),
      ],
      { shiftFor },
    )
    expect(night!.punches.map((p) => p.id)).toEqual(['n-in', 'n-out'])
    expect(morning!.punches.map((p) => p.id)).toEqual(['m-in', 'm-out'])
    expect([night!.workedMinutes, morning!.workedMinutes]).toEqual([480, 480])
  })
})

describe('an OUT after midnight stays with the night shift it closes', () => {
  // A night shift 18:00–07:00 on 13 July, an evening shift 16:00–00:00 on 14 July. The OUT at
  // 07:10 on the 14th closes the night of the 13th; filing it under the 14th would leave the 13th
  // without an OUT and the 14th with an OUT before its IN.
  const night = shift({ code: 'NIGHT', start: '18:00', end: '07:00' })
  const punches = () => [
    punch('IN', '2026-07-13 18:00', 'night-in'),
    punch('OUT', '2026-07-14 07:10', 'night-out'),
    punch('IN', '2026-07-14 16:00', 'eve-in'),
    punch('OUT', '2026-07-15 00:00', 'eve-out'),
  ]

  for (const [what, evening, nightShift] of [
    [
      "the evening shift's early window reaches back over 07:10",
      shift({ code: 'EVE', start: '16:00', end: '00:00', earlyWindowMinutes: 540 }),
      night,
    ],
    [
      "07:10 is past the night shift's late window",
      shift({ code: 'EVE', start: '16:00', end: '00:00' }),
      { ...night, lateWindowMinutes: 0 },
    ],
  ] as const) {
    it(`when ${what}`, () => {
      const shiftFor = (date: string) =>
        date === '2026-07-13' ? nightShift : date === '2026-07-14' ? evening : null
      const [d13, d14] = days(['2026-07-13', '2026-07-14'], punches(), { shiftFor })
      expect(d13!.status).toBe('PRESENT')
      expect(d13!.punches.map((p) => [p.id, p.role])).toEqual([
        ['night-in', 'IN'],
        ['night-out', 'OUT'],
      ])
      expect(d13!.lastOut).toBe(ist('2026-07-14 07:10'))
      expect(d13!.workedMinutes).toBe(790)
      expect(d14!.punches.map((p) => p.id)).toEqual(['eve-in', 'eve-out'])
      expect(d14!.status).toBe('PRESENT')
      expect(d14!.flags).not.toContain('ORPHAN_OUT')
    })
  }

  it('beyond maxShiftMinutes the OUT stays where its window puts it, and the night is INCOMPLETE, not ABSENT', () => {
    const evening = shift({ code: 'EVE', start: '16:00', end: '00:00', earlyWindowMinutes: 540 })
    const shiftFor = (date: string) =>
      date === '2026-07-13' ? night : date === '2026-07-14' ? evening : null
    const [d13, d14] = days(['2026-07-13', '2026-07-14'], punches(), {
      shiftFor,
      policy: policy({ maxShiftMinutes: 780 }),
    })
    expect(d13!.status).toBe('INCOMPLETE')
    expect(d13!.flags).toContain('MISSING_OUT')
    expect(d14!.punches.map((p) => p.id)).toContain('night-out')
    expect(d14!.flags).toContain('ORPHAN_OUT')
  })

  it('a re-sent OUT follows the OUT it repeats', () => {
    const evening = shift({ code: 'EVE', start: '16:00', end: '00:00', earlyWindowMinutes: 540 })
    const shiftFor = (date: string) =>
      date === '2026-07-13' ? night : date === '2026-07-14' ? evening : null
    const [d13, d14] = days(
      ['2026-07-13', '2026-07-14'],
      [...punches(), punch('OUT', '2026-07-14 07:11', 'night-out-again')],
      { shiftFor },
    )
    expect(d13!.punches.map((p) => [p.id, p.role])).toEqual([
      ['night-in', 'IN'],
      ['night-out', 'OUT'],
      ['night-out-again', 'DUPLICATE'],
    ])
    expect(d14!.flags).not.toContain('ORPHAN_OUT')
    expect(d14!.punches.map((p) => p.id)).toEqual(['eve-in', 'eve-out'])
  })

  it('a worker who stays past the late window keeps the OUT', () => {
    const [d] = days(['2026-03-10'], [punch('IN', '2026-03-10 08:00'), punch('OUT', '2026-03-10 21:00')])
    expect(d!.status).toBe('PRESENT')
    expect(d!.workedMinutes).toBe(780)
  })
})

describe('an attendance ending at exactly 00:00', () => {
  const late = shift({ code: 'LATE', start: '16:00', end: '00:00' })
  const punches = () => [punch('IN', '2026-03-10 16:00', 'in'), punch('OUT', '2026-03-11 00:00', 'out')]

  for (const [what, next] of [
    ['the next date has the same shift', late],
    ['the next date is unscheduled', null],
    ['the next date has a shift starting at 00:00', shift({ code: 'NIGHT', start: '00:00', end: '08:00' })],
  ] as const) {
    it(`belongs to the date it started on when ${what}`, () => {
      const shiftFor = (date: string) => (date === '2026-03-11' ? next : late)
      const [d10, d11] = days(['2026-03-10', '2026-03-11'], punches(), { shiftFor })
      expect(d10!.workedMinutes).toBe(480)
      expect(d10!.status).toBe('PRESENT')
      expect(d10!.punches.map((p) => p.id)).toEqual(['in', 'out'])
      expect(d11!.punches).toEqual([])
      expect(d11!.workedMinutes).toBe(0)
    })
  }
})
