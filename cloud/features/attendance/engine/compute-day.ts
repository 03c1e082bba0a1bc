import { formatInZone } from '../../../../shared/time.js'
import { dayNumber } from './calendar-date.js'
import { pairPunches } from './pair-punches.js'
import { MINUTE_MICROS, type ShiftInstance } from './shift-instance.js'
import type {
  ComputedDay,
  DayFlag,
  DayStatus,
  DayType,
  EnginePunch,
  Explanation,
  Pair,
  Policy,
} from './types.js'

/** One date of one employee: its instance (window already clipped), the punches attributed to it. */
export interface DayInput {
  employeeCode: string
  timeZone: string
  instance: ShiftInstance
  dayType: DayType
  punches: readonly EnginePunch[]
  policy: Policy
}

/** Whole minutes from `from` to `to`, rounded down; 0 when `to` is not after `from`. */
function minutesBetween(from: number, to: number): number {
  return to > from ? Math.floor((to - from) / MINUTE_MICROS) : 0
}

/** The OSH draft rule: of each started hour, 15–30 minutes count as 30, more than 30 as 60, less than 15 as none. */
function roundHalfHour(minutes: number): number {
  const rest = minutes % 60
  return minutes - rest + (rest < 15 ? 0 : rest <= 30 ? 30 : 60)
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`
}

/** An interval actually counted as work: a closed pair, from its effective start. */
interface Interval {
  from: number
  to: number
  minutes: number
}

/**
 * Computes one day (docs/decisions/0085-attendance-days-are-a-pure-function.md). Every figure is
 * whole minutes; each pair's time is rounded down to the minute and `workedMinutes` is the sum of
 * the pairs' minutes (less a fixed break, see below), so the pairs shown always add up.
 */
export function computeDay(input: DayInput): ComputedDay {
  const { instance, policy, dayType, timeZone } = input
  const paired = pairPunches(input.punches, policy)
  const flags = new Set<DayFlag>(paired.flags)
  const working = dayType === 'WORKING'
  const shift = instance.shift
  // On a weekly off or holiday no schedule is in force: nobody is late, and all time counts.
  const start = working ? instance.scheduledStart : null
  const end = working ? instance.scheduledEnd : null
  const clipEarly = start !== null && !policy.countEarlyArrival

  // Arriving early is not work unless the policy says so: a pair counts from the later of its IN
  // and the shift's start.
  const intervals: Interval[] = []
  const pairs: Pair[] = paired.pairs.map((p) => {
    if (p.in === null || p.out === null) return { in: p.in, out: p.out, minutes: 0 }
    const from = clipEarly && start !== null ? Math.max(p.in, start) : p.in
    const minutes = minutesBetween(from, p.out)
    if (p.out > from) intervals.push({ from, to: p.out, minutes })
    return { in: p.in, out: p.out, minutes }
  })
  const open = paired.pairs.some((p) => p.in === null || p.out === null)
  const punchedMinutes = intervals.reduce((sum, i) => sum + i.minutes, 0)

  // Punch gaps or a fixed unpaid break, never both: gaps between pairs are the breaks taken. With
  // a single pair the shift's fixed break is assumed taken and deducted, but only from a stretch
  // longer than the law lets anyone work without a rest (Factories Act s.55): a worker who leaves
  // after four hours took no break, and a half day must not turn into an absence.
  const gaps: { from: number; to: number; minutes: number }[] = []
  for (let i = 1; i < intervals.length; i++) {
    const from = intervals[i - 1]!.to
    const to = intervals[i]!.from
    gaps.push({ from, to, minutes: minutesBetween(from, to) })
  }
  const fixedBreak =
    intervals.length === 1 && punchedMinutes > policy.restAfterMinutes
      ? Math.min(shift?.unpaidBreakMinutes ?? 0, punchedMinutes)
      : 0
  const breakMinutes = intervals.length === 1 ? fixedBreak : gaps.reduce((sum, g) => sum + g.minutes, 0)
  const workedMinutes = punchedMinutes - fixedBreak

  const ins = paired.pairs.flatMap((p) => (p.in === null ? [] : [p.in]))
  const outs = paired.pairs.flatMap((p) => (p.out === null ? [] : [p.out]))
  const firstIn = ins.length > 0 ? Math.min(...ins) : null
  const lastOut = outs.length > 0 ? Math.max(...outs) : null
  const firstPair = paired.pairs[0]
  const lastPair = paired.pairs[paired.pairs.length - 1]
  // Late and early exit read the day's first IN and last OUT; a missing one is not a late arrival
  // or an early exit, it is a missing punch.
  const arrivedAt = firstPair?.in ?? null
  const leftAt = lastPair?.out ?? null
  const lateMinutes = start !== null && arrivedAt !== null ? minutesBetween(start, arrivedAt) : 0
  const earlyExitMinutes = end !== null && leftAt !== null ? minutesBetween(leftAt, end) : 0
  if (shift && lateMinutes > shift.lateGraceMinutes) flags.add('LATE_ENTRY')
  if (shift && earlyExitMinutes > shift.earlyExitGraceMinutes) flags.add('EARLY_EXIT')

  // Factories Act s.56: the spread-over runs from the first IN to the last OUT, rests included.
  const spreadOverMinutes = firstIn !== null && lastOut !== null ? minutesBetween(firstIn, lastOut) : 0
  if (spreadOverMinutes > policy.spreadOverLimitMinutes) flags.add('SPREAD_OVER_EXCEEDED')
  if (workedMinutes > policy.dailyLimitMinutes) flags.add('DAILY_LIMIT_EXCEEDED')
  if (noRestInterval(intervals, fixedBreak, workedMinutes, policy)) flags.add('NO_REST_INTERVAL')
  if (!working && paired.pairs.length > 0) flags.add('WORKED_ON_OFF_DAY')

  // A missing punch makes the day INCOMPLETE, never a silent ABSENT: someone must correct it. So
  // does a day whose only punches are OUTs.
  const incomplete = open || (paired.pairs.length === 0 && flags.has('ORPHAN_OUT'))
  let status: DayStatus
  if (incomplete) status = 'INCOMPLETE'
  else if (!working) status = workedMinutes > 0 ? 'PRESENT' : 'OFF'
  // The absent threshold is checked before the half-day one, and no minutes is never a half day.
  else if (workedMinutes === 0 || workedMinutes < policy.halfDayMinutes) status = 'ABSENT'
  else if (workedMinutes < policy.fullDayMinutes) status = 'HALF_DAY'
  else status = 'PRESENT'

  const overtime = computeOvertime({
    policy,
    dayType,
    open,
    workedMinutes,
    start,
    end,
    unpaidBreakMinutes: shift?.unpaidBreakMinutes ?? 0,
    firstIn: arrivedAt,
    lastOut: leftAt,
  })

  const clock = clockIn(timeZone, instance.workDate)
  const explanation: Explanation[] = [
    { field: 'status', text: explainStatus(status, dayType, workedMinutes, policy, paired.pairs.length) },
    {
      field: 'workedMinutes',
      text: explainWorked(intervals, pairs, fixedBreak, workedMinutes, clock, clipEarly ? start : null),
    },
    { field: 'breakMinutes', text: explainBreak(intervals.length, fixedBreak, gaps, clock) },
    {
      field: 'lateMinutes',
      text: explainLate(start, arrivedAt, lateMinutes, shift?.lateGraceMinutes ?? 0, working, clock),
    },
    {
      field: 'earlyExitMinutes',
      text: explainEarlyExit(
        end,
        leftAt,
        earlyExitMinutes,
        shift?.earlyExitGraceMinutes ?? 0,
        working,
        clock,
      ),
    },
    { field: 'overtimeMinutes', text: overtime.text },
    {
      field: 'spreadOverMinutes',
      text: explainSpreadOver(firstIn, lastOut, spreadOverMinutes, policy.spreadOverLimitMinutes, clock),
    },
  ]

  return {
    employeeCode: input.employeeCode,
    workDate: instance.workDate,
    shiftCode: shift?.code ?? null,
    scheduledStart: instance.scheduledStart,
    scheduledEnd: instance.scheduledEnd,
    captureStart: instance.captureStart,
    captureEnd: instance.captureEnd,
    dayType,
    status,
    firstIn,
    lastOut,
    workedMinutes,
    breakMinutes,
    lateMinutes,
    earlyExitMinutes,
    overtimeMinutes: overtime.minutes,
    spreadOverMinutes,
    flags: [...flags].sort(),
    punches: paired.punches.map((p) => ({
      id: p.id,
      punchType: p.punchType,
      punchedAt: p.punchedAt,
      role: p.role,
    })),
    pairs,
    explanation,
  }
}

/**
 * Factories Act s.55: no stretch of more than `restAfterMinutes` of work without a rest of at least
 * `restMinutes`. A gap shorter than a rest does not end a stretch. A single pair with a fixed break
 * long enough to be a rest is assumed to have had it at the best time, splitting the work in two,
 * so only more than twice the stretch is flagged.
 */
function noRestInterval(intervals: Interval[], fixedBreak: number, worked: number, policy: Policy): boolean {
  if (intervals.length === 1 && fixedBreak >= policy.restMinutes && fixedBreak > 0) {
    return worked > 2 * policy.restAfterMinutes
  }
  if (intervals.length === 1) return worked > policy.restAfterMinutes
  let stretch = 0
  for (let i = 0; i < intervals.length; i++) {
    const interval = intervals[i]!
    const previous = intervals[i - 1]
    if (previous && minutesBetween(previous.to, interval.from) >= policy.restMinutes) stretch = 0
    stretch += interval.minutes
    if (stretch > policy.restAfterMinutes) return true
  }
  return false
}

interface OvertimeInput {
  policy: Policy
  dayType: DayType
  open: boolean
  workedMinutes: number
  start: number | null
  end: number | null
  unpaidBreakMinutes: number
  firstIn: number | null
  lastOut: number | null
}

function computeOvertime(o: OvertimeInput): { minutes: number; text: string } {
  const { policy } = o
  const rounded = (minutes: number, because: string) => {
    if (policy.overtimeRounding !== 'HALF_HOUR' || minutes === 0) {
      return { minutes, text: `${because}: ${plural(minutes, 'minute')} of overtime.` }
    }
    const r = roundHalfHour(minutes)
    return { minutes: r, text: `${because}: ${minutes} minutes, rounded by half hours to ${r}.` }
  }
  // Overtime is not known until the day's last OUT is.
  if (o.open) return { minutes: 0, text: 'No overtime while a punch is missing.' }
  if (o.dayType !== 'WORKING') {
    const day = o.dayType === 'HOLIDAY' ? 'a holiday' : 'a weekly off'
    return rounded(o.workedMinutes, `All ${o.workedMinutes} minutes worked on ${day} are overtime`)
  }
  if (policy.overtimeBasis === 'SHIFT' && o.start !== null && o.end !== null) {
    const scheduled = Math.max(0, minutesBetween(o.start, o.end) - o.unpaidBreakMinutes)
    const tolerance = policy.overtimeToleranceMinutes
    // Arriving a little early or leaving a little late is not overtime: up to the tolerance, on
    // each side, that time is forgiven; beyond it, all of it counts.
    const early = policy.countEarlyArrival && o.firstIn !== null ? minutesBetween(o.firstIn, o.start) : 0
    const late = o.lastOut !== null ? minutesBetween(o.end, o.lastOut) : 0
    const forgiven = (early <= tolerance ? early : 0) + (late <= tolerance ? late : 0)
    const minutes = Math.max(0, o.workedMinutes - scheduled - forgiven)
    let because = `${o.workedMinutes} minutes worked against ${scheduled} scheduled`
    if (forgiven > 0) because += `, less ${forgiven} within the ${tolerance}-minute tolerance`
    return rounded(minutes, because)
  }
  const minutes = Math.max(0, o.workedMinutes - policy.dailyLimitMinutes)
  return rounded(
    minutes,
    `${o.workedMinutes} minutes worked against the daily limit of ${policy.dailyLimitMinutes}`,
  )
}

/** Formats an instant as `HH:MM` on the tenant's clock, naming the day when it is not the work date. */
function clockIn(timeZone: string, workDate: string): (at: number) => string {
  const workDay = dayNumber(workDate)
  return (at) => {
    const text = formatInZone(at, timeZone)
    const time = text.slice(11, 16)
    const offset = dayNumber(text.slice(0, 10)) - workDay
    if (offset === 0) return time
    if (offset === 1) return `${time} next day`
    if (offset === -1) return `${time} the day before`
    return `${time} on ${text.slice(0, 10)}`
  }
}

function explainStatus(
  status: DayStatus,
  dayType: DayType,
  worked: number,
  policy: Policy,
  pairCount: number,
): string {
  const day = dayType === 'HOLIDAY' ? 'a holiday' : 'a weekly off'
  switch (status) {
    case 'OFF':
      return `Off: ${day} with no work.`
    case 'INCOMPLETE':
      return 'Incomplete: a punch is missing, so the day is not judged until it is corrected.'
    case 'ABSENT':
      return pairCount === 0
        ? 'Absent: no punches.'
        : `Absent: ${plural(worked, 'minute')} worked, under the ${policy.halfDayMinutes} of a half day.`
    case 'HALF_DAY':
      return `Half day: ${worked} minutes worked, under the ${policy.fullDayMinutes} of a full day.`
    case 'PRESENT':
      return dayType === 'WORKING'
        ? `Present: ${worked} minutes worked, at least the ${policy.fullDayMinutes} of a full day.`
        : `Present on ${day}: ${worked} minutes worked.`
  }
}

function joinList(items: string[]): string {
  if (items.length <= 1) return items.join('')
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`
}

function explainWorked(
  intervals: Interval[],
  pairs: Pair[],
  fixedBreak: number,
  worked: number,
  clock: (at: number) => string,
  clippedAt: number | null,
): string {
  const missing = pairs.filter((p) => p.in === null || p.out === null)
  const unpaired = missing.map((p) =>
    p.in === null ? `the OUT at ${clock(p.out!)} has no IN` : `the IN at ${clock(p.in)} has no OUT`,
  )
  const note = unpaired.length > 0 ? `; ${joinList(unpaired)}` : ''
  if (intervals.length === 0) return `No complete IN–OUT pair: 0 minutes worked${note}.`
  const spans = joinList(intervals.map((i) => `${clock(i.from)}–${clock(i.to)}`))
  const early =
    clippedAt !== null && pairs.some((p) => p.in !== null && p.out !== null && p.in < clippedAt)
      ? ` (time before the ${clock(clippedAt)} start not counted)`
      : ''
  const less = fixedBreak > 0 ? ` less a ${fixedBreak}-minute unpaid break` : ''
  return `Worked ${spans}${early}${less}: ${plural(worked, 'minute')}${note}.`
}

function explainBreak(
  intervalCount: number,
  fixedBreak: number,
  gaps: { from: number; to: number; minutes: number }[],
  clock: (at: number) => string,
): string {
  if (intervalCount === 1 && fixedBreak > 0) {
    return `The shift's fixed unpaid break of ${fixedBreak} minutes, as the punches show no break.`
  }
  if (gaps.length === 0) return 'No break.'
  const spans = joinList(gaps.map((g) => `${clock(g.from)}–${clock(g.to)}`))
  const total = gaps.reduce((sum, g) => sum + g.minutes, 0)
  return `Breaks between punches, ${spans}: ${plural(total, 'minute')}; the fixed break is not also deducted.`
}

function explainLate(
  start: number | null,
  arrivedAt: number | null,
  late: number,
  grace: number,
  working: boolean,
  clock: (at: number) => string,
): string {
  if (!working) return 'No schedule on a day off: nobody is late.'
  if (start === null) return 'No shift scheduled: nobody is late.'
  if (arrivedAt === null) return 'No IN to compare with the start.'
  if (late === 0) return `In at ${clock(arrivedAt)}, on time for the ${clock(start)} start.`
  const verdict = late > grace ? `beyond the ${grace}-minute grace: late` : `within the ${grace}-minute grace`
  return `In at ${clock(arrivedAt)}, ${plural(late, 'minute')} after the ${clock(start)} start, ${verdict}.`
}

function explainEarlyExit(
  end: number | null,
  leftAt: number | null,
  early: number,
  grace: number,
  working: boolean,
  clock: (at: number) => string,
): string {
  if (!working) return 'No schedule on a day off: no early exit.'
  if (end === null) return 'No shift scheduled: no early exit.'
  if (leftAt === null) return 'No OUT to compare with the end.'
  if (early === 0) return `Out at ${clock(leftAt)}, not before the ${clock(end)} end.`
  const verdict =
    early > grace ? `beyond the ${grace}-minute grace: an early exit` : `within the ${grace}-minute grace`
  return `Out at ${clock(leftAt)}, ${plural(early, 'minute')} before the ${clock(end)} end, ${verdict}.`
}

function explainSpreadOver(
  firstIn: number | null,
  lastOut: number | null,
  spread: number,
  limit: number,
  clock: (at: number) => string,
): string {
  if (firstIn === null || lastOut === null || spread === 0)
    return 'No spread-over without both an IN and an OUT.'
  const verdict = spread > limit ? `above the ${limit}-minute limit` : `within the ${limit}-minute limit`
  return `First IN ${clock(firstIn)} to last OUT ${clock(lastOut)}: ${spread} minutes, ${verdict}.`
}
