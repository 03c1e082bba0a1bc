import { describe, expect, it } from 'vitest'
import type { AttendanceDay } from '../../../../cloud/console/src/api-types.js'
import {
  addMonths,
  buildMonthGrid,
  currentMonth,
  isMonth,
  monthDates,
  monthRange,
} from '../../../../cloud/console/src/attendance-month.js'

function day(employeeCode: string, workDate: string, fields: Partial<AttendanceDay> = {}): AttendanceDay {
  return {
    id: `day_${employeeCode}_${workDate}`,
    employeeCode,
    workDate,
    shiftCode: null,
    scheduledStart: null,
    scheduledEnd: null,
    dayType: 'WORKING',
    status: 'PRESENT',
    state: 'FINAL',
    firstIn: null,
    lastOut: null,
    workedMinutes: 480,
    breakMinutes: 0,
    lateMinutes: 0,
    earlyExitMinutes: 0,
    overtimeMinutes: 0,
    spreadOverMinutes: 480,
    flags: [],
    punches: [],
    revision: 1,
    updatedAt: '2026-11-21T10:00:00.000000Z',
    ...fields,
  }
}

describe('months', () => {
  it('has every date of the month, leap years included', () => {
    expect(monthDates('2026-11')).toHaveLength(30)
    expect(monthDates('2028-02')).toHaveLength(29)
    expect(monthDates('2026-02').at(-1)).toBe('2026-02-28')
    expect(monthRange('2026-12')).toEqual({ from: '2026-12-01', to: '2026-12-31' })
  })

  it('steps across years', () => {
    expect(addMonths('2026-12', 1)).toBe('2027-01')
    expect(addMonths('2026-01', -1)).toBe('2025-12')
    expect(addMonths('2026-05', -17)).toBe('2024-12')
  })

  it('knows a month when it sees one', () => {
    expect(isMonth('2026-11')).toBe(true)
    expect(isMonth('2026-13')).toBe(false)
    expect(isMonth('2026-1')).toBe(false)
  })

  it("is this month in the tenant's time zone, not the browser's", () => {
    const lateOnOctober31InUtc = Date.UTC(2026, 9, 31, 20, 0)
    expect(currentMonth('UTC', lateOnOctober31InUtc)).toBe('2026-10')
    expect(currentMonth('Asia/Kolkata', lateOnOctober31InUtc)).toBe('2026-11')
  })
})

describe('buildMonthGrid', () => {
  it('puts each day in its employee row and date column, and adds up the month', () => {
    const days = [
      day('E1', '2026-11-01'),
      day('E1', '2026-11-03', { status: 'HALF_DAY', workedMinutes: 270, overtimeMinutes: 0 }),
      day('E1', '2026-11-04', { status: 'ABSENT', workedMinutes: 0 }),
      day('E2', '2026-11-30', { status: 'INCOMPLETE', workedMinutes: 0 }),
      day('E2', '2026-11-29', { status: 'OFF', workedMinutes: 0 }),
      day('E2', '2026-11-28', { overtimeMinutes: 45, workedMinutes: 585 }),
    ]
    const grid = buildMonthGrid(days, '2026-11', true)
    expect(grid.dates).toHaveLength(30)
    expect(grid.heldBack).toBeUndefined()
    expect(grid.rows.map((r) => r.employeeCode)).toEqual(['E1', 'E2'])
    const [e1, e2] = grid.rows
    expect(e1?.cells.map((c) => c?.status ?? null).slice(0, 5)).toEqual([
      'PRESENT',
      null,
      'HALF_DAY',
      'ABSENT',
      null,
    ])
    expect(e1?.totals).toEqual({
      present: 1,
      halfDay: 1,
      absent: 1,
      incomplete: 0,
      off: 0,
      workedMinutes: 750,
      overtimeMinutes: 0,
    })
    expect(e2?.cells[29]?.status).toBe('INCOMPLETE')
    expect(e2?.totals).toMatchObject({
      present: 1,
      incomplete: 1,
      off: 1,
      workedMinutes: 585,
      overtimeMinutes: 45,
    })
  })

  it('holds back the last employee while more pages may hold the rest of their month', () => {
    const days = [day('E1', '2026-11-01'), day('E2', '2026-11-01'), day('E2', '2026-11-02')]
    const partial = buildMonthGrid(days, '2026-11', false)
    expect(partial.rows.map((r) => r.employeeCode)).toEqual(['E1'])
    expect(partial.heldBack).toBe('E2')
    const whole = buildMonthGrid([...days, day('E2', '2026-11-03')], '2026-11', true)
    expect(whole.rows.map((r) => r.employeeCode)).toEqual(['E1', 'E2'])
    expect(whole.rows[1]?.totals.present).toBe(3)
  })

  it('leaves out days outside the month', () => {
    const grid = buildMonthGrid([day('E1', '2026-10-31'), day('E1', '2026-12-01')], '2026-11', true)
    expect(grid.rows).toEqual([])
  })
})
