import type { AttendanceDay } from './api-types.js'
import { dateMillis, todayIn } from './attendance-time.js'

/** A calendar month, `YYYY-MM`. */
export type Month = string

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/

export function isMonth(text: string): boolean {
  return MONTH.test(text)
}

/** This month in `timeZone` (the tenant's: its days are counted there). */
export function currentMonth(timeZone: string, now = Date.now()): Month {
  return todayIn(timeZone, now).slice(0, 7)
}

/** The month `delta` months after (or before) `month`. */
export function addMonths(month: Month, delta: number): Month {
  const [year, mon] = month.split('-').map(Number) as [number, number]
  const index = year * 12 + (mon - 1) + delta
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`
}

/** Every date of `month`, `YYYY-MM-DD`, in order. */
export function monthDates(month: Month): string[] {
  const dates: string[] = []
  for (let day = 1; day <= 31; day++) {
    const date = `${month}-${String(day).padStart(2, '0')}`
    if (dateMillis(date) === undefined) break
    dates.push(date)
  }
  return dates
}

/** The first and last date of `month`, as the day list's `from` and `to` (both inclusive). */
export function monthRange(month: Month): { from: string; to: string } {
  const dates = monthDates(month)
  return { from: dates[0] ?? `${month}-01`, to: dates[dates.length - 1] ?? `${month}-01` }
}

/** "November 2026". */
export function formatMonth(month: Month): string {
  const ms = dateMillis(`${month}-01`)
  if (ms === undefined) return month
  return new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(ms)
}

/** What an employee's month adds up to, from the days loaded. */
export interface MonthTotals {
  present: number
  halfDay: number
  absent: number
  incomplete: number
  off: number
  workedMinutes: number
  overtimeMinutes: number
}

export interface MonthRow {
  employeeCode: string
  /** One per date of the month, in order; undefined where there is no day record. */
  cells: (AttendanceDay | undefined)[]
  totals: MonthTotals
}

export interface MonthGrid {
  dates: string[]
  rows: MonthRow[]
  /** The employee whose days may go on in the next page, left out until it is in. */
  heldBack: string | undefined
}

const noTotals = (): MonthTotals => ({
  present: 0,
  halfDay: 0,
  absent: 0,
  incomplete: 0,
  off: 0,
  workedMinutes: 0,
  overtimeMinutes: 0,
})

const COUNTED = {
  PRESENT: 'present',
  HALF_DAY: 'halfDay',
  ABSENT: 'absent',
  INCOMPLETE: 'incomplete',
  OFF: 'off',
} as const satisfies Record<AttendanceDay['status'], keyof MonthTotals>

/**
 * The month as a grid: a row per employee (in the order the days came, which is by employee code), a cell per
 * date. The days come a page at a time ordered by employee then date, so while there are more pages the
 * last employee's days may be cut short: `complete` false leaves that employee out (`heldBack`) until the
 * next page. Days outside the month are ignored.
 */
export function buildMonthGrid(days: readonly AttendanceDay[], month: Month, complete: boolean): MonthGrid {
  const dates = monthDates(month)
  const column = new Map(dates.map((d, i) => [d, i]))
  const heldBack = complete ? undefined : days[days.length - 1]?.employeeCode
  const rows = new Map<string, MonthRow>()
  for (const day of days) {
    const index = column.get(day.workDate)
    if (index === undefined || day.employeeCode === heldBack) continue
    let row = rows.get(day.employeeCode)
    if (!row) {
      row = { employeeCode: day.employeeCode, cells: dates.map(() => undefined), totals: noTotals() }
      rows.set(day.employeeCode, row)
    }
    row.cells[index] = day
  }
  for (const row of rows.values()) {
    for (const day of row.cells) {
      if (!day) continue
      row.totals[COUNTED[day.status]]++
      row.totals.workedMinutes += day.workedMinutes
      row.totals.overtimeMinutes += day.overtimeMinutes
    }
  }
  return { dates, rows: [...rows.values()], heldBack }
}
