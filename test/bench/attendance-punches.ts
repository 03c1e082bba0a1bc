import { addDays, startOfDate, weekdayOf } from '../../cloud/features/attendance/work-dates.js'

/** The two employee groups (departments) of the benchmark tenants, each with its shift. */
export const DAY_GROUP = 'Day'
export const NIGHT_GROUP = 'Night'

export interface BenchEmployeeSpec {
  code: string
  /** DAY_GROUP or NIGHT_GROUP: the employee's department, which picks its shift and policy. */
  group: string
}

export interface GeneratedPunch {
  employeeCode: string
  punchType: 'IN' | 'OUT'
  /** µs since the epoch. */
  punchedAt: number
}

/** How many days of each kind the generator made, for a run's notes. */
export interface PunchMix {
  employeeDays: number
  inOut: number
  withBreak: number
  missingOut: number
  missingIn: number
  doubleIn: number
  absent: number
  off: number
  workedOnOff: number
}

const MINUTE = 60_000_000

/** A small deterministic generator (mulberry32): the same seed gives the same month of punches. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** The employees of a benchmark tenant: one in five on the night shift, the rest on the day shift. */
export function benchEmployees(count: number): BenchEmployeeSpec[] {
  return Array.from({ length: count }, (_, i) => ({
    code: `E${String(i + 1).padStart(6, '0')}`,
    group: i % 5 === 4 ? NIGHT_GROUP : DAY_GROUP,
  }))
}

/** The first date on or after `date` that is not a Sunday (the weekly off): the holiday. */
export function holidayOnOrAfter(date: string): string {
  let d = date
  while (weekdayOf(d) === 0) d = addDays(d, 1)
  return d
}

/**
 * A factory's punches over some dates, as terminals record them: on a working day most employees
 * punch IN near their shift's start and OUT near its end (some late, some with overtime), one in ten
 * also punches out and in for a break; some forget the OUT, some the IN, some punch IN twice, a few
 * are absent. Sundays are weekly offs and `holidays` are holidays, where a few work anyway. The day
 * shift is 09:00–18:00, the night shift 22:00–06:00 (its OUT on the next date). Deterministic for a
 * seed; in no particular order.
 */
export function generatePunches(
  employees: readonly BenchEmployeeSpec[],
  dates: readonly string[],
  holidays: ReadonlySet<string>,
  timeZone: string,
  seed = 1,
): { punches: GeneratedPunch[]; mix: PunchMix } {
  const next = random(seed)
  const between = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  const punches: GeneratedPunch[] = []
  const mix: PunchMix = {
    employeeDays: 0,
    inOut: 0,
    withBreak: 0,
    missingOut: 0,
    missingIn: 0,
    doubleIn: 0,
    absent: 0,
    off: 0,
    workedOnOff: 0,
  }
  for (const date of dates) {
    const midnight = startOfDate(date, timeZone)
    const off = weekdayOf(date) === 0 || holidays.has(date)
    for (const e of employees) {
      mix.employeeDays++
      const night = e.group === NIGHT_GROUP
      // Minutes after the date's midnight; the night shift ends at 06:00 the next day.
      const start = night ? 22 * 60 : 9 * 60
      const end = night ? 30 * 60 : 18 * 60
      const at = (minutes: number) => midnight + minutes * MINUTE + between(0, 59) * 1_000_000
      const push = (punchType: 'IN' | 'OUT', minutes: number) =>
        punches.push({ employeeCode: e.code, punchType, punchedAt: at(minutes) })
      const r = next()
      if (off) {
        // A few come in on a weekly off or a holiday.
        if (r < 0.03) {
          mix.workedOnOff++
          push('IN', start + between(-10, 20))
          push('OUT', end + between(-60, 10))
        } else mix.off++
        continue
      }
      const inAt = start + between(-20, 25)
      const outAt = end + between(-15, 60)
      if (r < 0.04) mix.absent++
      else if (r < 0.09) {
        mix.missingOut++
        push('IN', inAt)
      } else if (r < 0.11) {
        mix.missingIn++
        push('OUT', outAt)
      } else if (r < 0.14) {
        // Unsure the first took, or a second terminal: outside the duplicate window, so flagged.
        mix.doubleIn++
        push('IN', inAt)
        push('IN', inAt + between(3, 15))
        push('OUT', outAt)
      } else if (r < 0.24) {
        mix.withBreak++
        const breakAt = start + between(230, 260)
        push('IN', inAt)
        push('OUT', breakAt)
        push('IN', breakAt + between(25, 45))
        push('OUT', outAt)
      } else {
        mix.inOut++
        push('IN', inAt)
        push('OUT', outAt)
      }
    }
  }
  return { punches, mix }
}

export function mixNote(mix: PunchMix): string {
  const pct = (n: number) => `${((100 * n) / mix.employeeDays).toFixed(1)} %`
  return (
    `punch mix over ${mix.employeeDays} employee-days: IN/OUT ${pct(mix.inOut)}, with a break ${pct(mix.withBreak)}, ` +
    `missing OUT ${pct(mix.missingOut)}, missing IN ${pct(mix.missingIn)}, double IN ${pct(mix.doubleIn)}, ` +
    `absent ${pct(mix.absent)}, weekly off or holiday ${pct(mix.off)}, worked on one ${pct(mix.workedOnOff)}`
  )
}
