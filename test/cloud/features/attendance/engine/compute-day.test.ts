import { describe, expect, it } from 'vitest'
import { defaultPolicy } from '../../../../../cloud/features/attendance/engine/policy-defaults.js'
import { day, days, policy, punch, shift } from './engine-fixtures.js'

const TUE = '2026-03-10'

describe('half-day and absent thresholds (cases after a known HR system test)', () => {
  // That system's "half-day threshold" is the least a full day needs (fewer hours is a half day)
  // and its "absent threshold" the least a half day needs. Ours are fullDayMinutes and
  // halfDayMinutes.
  it('08:00–09:30 with a full day from 2 h and no absent threshold is a HALF_DAY of 90 minutes', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 09:30`)], {
      policy: policy({ fullDayMinutes: 120, halfDayMinutes: 0 }),
    })
    expect(d.workedMinutes).toBe(90)
    expect(d.status).toBe('HALF_DAY')
  })

  it('08:00–08:45 with a half day from 1 h is ABSENT: the absent threshold is checked first', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 08:45`)], {
      policy: policy({ fullDayMinutes: 120, halfDayMinutes: 60 }),
    })
    expect(d.workedMinutes).toBe(45)
    expect(d.status).toBe('ABSENT')
  })

  it('a fixed break is deducted only from a stretch longer than five hours: leaving at noon is a half day, not an absence', () => {
    const lunch = shift({ start: '08:00', end: '17:00', unpaidBreakMinutes: 60 })
    const half = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 12:00`)], { shiftFor: lunch })
    expect(half).toMatchObject({ workedMinutes: 240, breakMinutes: 0, status: 'HALF_DAY' })
    const full = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 17:00`)], { shiftFor: lunch })
    expect(full).toMatchObject({ workedMinutes: 480, breakMinutes: 60, status: 'PRESENT' })
  })

  it('a working day with no punches is ABSENT, and no minutes is never a half day', () => {
    expect(day(TUE, [], { policy: policy({ halfDayMinutes: 0 }) }).status).toBe('ABSENT')
  })

  it('with 60/60 grace on 08:00–12:00, in 09:30 and out 10:30 are 90 minutes late and 90 early: both flagged', () => {
    const grace = shift({ start: '08:00', end: '12:00', lateGraceMinutes: 60, earlyExitGraceMinutes: 60 })
    const d = day(TUE, [punch('IN', `${TUE} 09:30`), punch('OUT', `${TUE} 10:30`)], { shiftFor: grace })
    expect(d.lateMinutes).toBe(90)
    expect(d.earlyExitMinutes).toBe(90)
    expect(d.flags).toEqual(expect.arrayContaining(['LATE_ENTRY', 'EARLY_EXIT']))
    // At the grace exactly, the minutes are reported but not flagged.
    const within = day(TUE, [punch('IN', `${TUE} 09:00`), punch('OUT', `${TUE} 11:00`)], { shiftFor: grace })
    expect([within.lateMinutes, within.earlyExitMinutes]).toEqual([60, 60])
    expect(within.flags).not.toContain('LATE_ENTRY')
    expect(within.flags).not.toContain('EARLY_EXIT')
  })
})

describe('overtime against the shift (cases after a known ERP test: 8 h with a 12:00–13:00 lunch)', () => {
  // 08:00–17:00 with an hour's unpaid break: 480 minutes scheduled. Wide windows keep a 20:00 OUT
  // in the day's own window.
  const office = shift({ unpaidBreakMinutes: 60, earlyWindowMinutes: 240, lateWindowMinutes: 240 })
  const bySchedule = policy({ overtimeBasis: 'SHIFT' })

  it('08:00–20:00 in one pair, less the fixed break: 660 worked, 180 overtime', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 20:00`)], {
      shiftFor: office,
      policy: bySchedule,
    })
    expect(d.workedMinutes).toBe(660)
    expect(d.breakMinutes).toBe(60)
    expect(d.overtimeMinutes).toBe(180)
  })

  it('an attendance still open has no overtime', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`)], { shiftFor: office, policy: bySchedule })
    expect(d.overtimeMinutes).toBe(0)
    expect(d.status).toBe('INCOMPLETE')
  })

  it('08:00–12:00 and 13:00–18:00: the gap is the break (the fixed one is not also deducted), 60 overtime', () => {
    const d = day(
      TUE,
      [
        punch('IN', `${TUE} 08:00`),
        punch('OUT', `${TUE} 12:00`),
        punch('IN', `${TUE} 13:00`),
        punch('OUT', `${TUE} 18:00`),
      ],
      { shiftFor: office, policy: bySchedule },
    )
    expect(d.workedMinutes).toBe(540)
    expect(d.breakMinutes).toBe(60)
    expect(d.overtimeMinutes).toBe(60)
  })

  it('Saturday, a weekly off with no hours scheduled, 08:00–11:00: all 180 minutes are overtime', () => {
    const SAT = '2026-03-07'
    const d = day(SAT, [punch('IN', `${SAT} 08:00`), punch('OUT', `${SAT} 11:00`)], {
      shiftFor: (date) => (date === SAT || date === '2026-03-08' ? null : office),
      policy: policy({ overtimeBasis: 'SHIFT', weeklyOffDays: [0, 6] }),
    })
    expect(d.dayType).toBe('WEEKLY_OFF')
    expect(d.status).toBe('PRESENT')
    expect(d.workedMinutes).toBe(180)
    expect(d.overtimeMinutes).toBe(180)
    expect(d.flags).toContain('WORKED_ON_OFF_DAY')
  })

  it('07:55–12:00 and 13:00–17:05, early arrival counted: 10 minutes over, forgiven by a 10-minute tolerance but not by a 4-minute one', () => {
    const punches = [
      punch('IN', `${TUE} 07:55`),
      punch('OUT', `${TUE} 12:00`),
      punch('IN', `${TUE} 13:00`),
      punch('OUT', `${TUE} 17:05`),
    ]
    const at = (tolerance: number) =>
      day(TUE, punches, {
        shiftFor: office,
        policy: policy({
          overtimeBasis: 'SHIFT',
          countEarlyArrival: true,
          overtimeToleranceMinutes: tolerance,
        }),
      })
    expect(at(10).workedMinutes).toBe(490)
    expect(at(10).overtimeMinutes).toBe(0)
    expect(at(4).overtimeMinutes).toBe(10)
  })

  it('does not count arriving early as work unless the policy says so', () => {
    const punches = [punch('IN', `${TUE} 07:30`), punch('OUT', `${TUE} 17:00`)]
    expect(day(TUE, punches, { shiftFor: office, policy: bySchedule }).workedMinutes).toBe(480)
    const counted = day(TUE, punches, {
      shiftFor: office,
      policy: policy({ overtimeBasis: 'SHIFT', countEarlyArrival: true }),
    })
    expect(counted.workedMinutes).toBe(510)
    expect(counted.overtimeMinutes).toBe(30)
  })
})

describe('the Factories Act and the OSH Code', () => {
  const MON = '2026-03-09'

  it('a night shift 22:00 Monday – 06:00 Tuesday is one day, Monday, of 480 minutes (s.57(b))', () => {
    const night = shift({ start: '22:00', end: '06:00' })
    const [mon, tue] = days([MON, TUE], [punch('IN', `${MON} 22:00`), punch('OUT', `${TUE} 06:00`)], {
      shiftFor: night,
    })
    expect(mon!.workDate).toBe(MON)
    expect(mon!.workedMinutes).toBe(480)
    expect(mon!.status).toBe('PRESENT')
    expect(mon!.punches).toHaveLength(2)
    expect(tue!.punches).toHaveLength(0)
  })

  // 08:00–18:30 with a 30-minute unpaid break: 600 minutes worked, a spread-over of 630.
  const long = shift({ start: '08:00', end: '16:30', unpaidBreakMinutes: 30, lateWindowMinutes: 180 })

  it('08:00–18:30 less a 30-minute break: 600 worked, 60 overtime beyond the Act’s 9 h, the spread-over exactly at its 10.5 h limit', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 18:30`)], {
      shiftFor: long,
      policy: defaultPolicy('FACTORIES_ACT_1948'),
    })
    expect(d.workedMinutes).toBe(600)
    expect(d.overtimeMinutes).toBe(60)
    expect(d.spreadOverMinutes).toBe(630)
    expect(d.flags).toContain('DAILY_LIMIT_EXCEEDED')
    expect(d.flags).not.toContain('SPREAD_OVER_EXCEEDED')
    // Two stretches of 300 around the break: no rest interval missed.
    expect(d.flags).not.toContain('NO_REST_INTERVAL')
  })

  it('the same day under the OSH Code regime: 120 minutes of overtime beyond 8 h', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 18:30`)], {
      shiftFor: long,
      policy: defaultPolicy('OSH_CODE_2020'),
    })
    expect(d.overtimeMinutes).toBe(120)
    expect(d.flags).not.toContain('SPREAD_OVER_EXCEEDED')
  })

  it('08:00–18:31 exceeds the 630-minute spread-over (s.56)', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 18:31`)], { shiftFor: long })
    expect(d.spreadOverMinutes).toBe(631)
    expect(d.flags).toContain('SPREAD_OVER_EXCEEDED')
  })

  it('six hours in one pair with no break is more than five without a rest (s.55)', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} 14:00`)], { shiftFor: shift() })
    expect(d.workedMinutes).toBe(360)
    expect(d.flags).toContain('NO_REST_INTERVAL')
  })

  it('a gap shorter than the 30-minute rest does not end a stretch; one of 30 does', () => {
    const short = day(
      TUE,
      [
        punch('IN', `${TUE} 08:00`),
        punch('OUT', `${TUE} 12:00`),
        punch('IN', `${TUE} 12:10`),
        punch('OUT', `${TUE} 14:00`),
      ],
      { shiftFor: shift() },
    )
    expect(short.flags).toContain('NO_REST_INTERVAL')
    const rested = day(
      TUE,
      [
        punch('IN', `${TUE} 08:00`),
        punch('OUT', `${TUE} 12:00`),
        punch('IN', `${TUE} 12:30`),
        punch('OUT', `${TUE} 17:00`),
      ],
      { shiftFor: shift() },
    )
    expect(rested.flags).not.toContain('NO_REST_INTERVAL')
  })

  it('rounds overtime by the OSH draft rule: of each hour, under 15 minutes none, 15–30 half an hour, more a whole hour', () => {
    const rounded = (outAt: string) =>
      day(TUE, [punch('IN', `${TUE} 08:00`), punch('OUT', `${TUE} ${outAt}`)], {
        shiftFor: shift({ lateWindowMinutes: 240 }),
        policy: { ...defaultPolicy('OSH_CODE_2020'), overtimeRounding: 'HALF_HOUR' },
      }).overtimeMinutes
    // The daily limit is 480: 08:00–16:00.
    expect(rounded('16:14')).toBe(0)
    expect(rounded('16:15')).toBe(30)
    expect(rounded('16:30')).toBe(30)
    expect(rounded('16:31')).toBe(60)
    expect(rounded('17:15')).toBe(90)
  })
})

describe('the explanation', () => {
  it('explains every figure in a sentence, with local times', () => {
    const d = day(TUE, [punch('IN', `${TUE} 08:02`), punch('OUT', `${TUE} 17:05`)], {
      shiftFor: shift({ unpaidBreakMinutes: 30 }),
    })
    expect(d.workedMinutes).toBe(513)
    const text = Object.fromEntries(d.explanation.map((e) => [e.field, e.text]))
    expect(Object.keys(text).sort()).toEqual(
      [
        'breakMinutes',
        'earlyExitMinutes',
        'lateMinutes',
        'overtimeMinutes',
        'spreadOverMinutes',
        'status',
        'workedMinutes',
      ].sort(),
    )
    expect(text.workedMinutes).toBe('Worked 08:02–17:05 less a 30-minute unpaid break: 513 minutes.')
    expect(text.lateMinutes).toBe(
      'In at 08:02, 2 minutes after the 08:00 start, beyond the 0-minute grace: late.',
    )
    expect(text.status).toBe('Present: 513 minutes worked, at least the 420 of a full day.')
  })

  it('names the next day for a time after midnight', () => {
    const MON = '2026-03-09'
    const d = day(MON, [punch('IN', `${MON} 22:00`), punch('OUT', `${TUE} 06:00`)], {
      shiftFor: shift({ start: '22:00', end: '06:00' }),
    })
    const worked = d.explanation.find((e) => e.field === 'workedMinutes')?.text
    expect(worked).toBe('Worked 22:00–06:00 next day: 480 minutes.')
  })
})
