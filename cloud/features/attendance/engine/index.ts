/** The attendance engine: a day is a pure function of punches, shift, policy and calendar (docs/decisions/0085-attendance-days-are-a-pure-function.md). */
export { type AttributedInstance, attributePunches, clipCaptureWindows } from './attribute-punches.js'
export { addDays, weekdayOf } from './calendar-date.js'
export { computeDay, type DayInput } from './compute-day.js'
export { computeDays, dayTypeOf } from './compute-days.js'
export {
  comparePunches,
  findDuplicates,
  type PairedPunches,
  type PunchPair,
  pairPunches,
  type RoledPunch,
  uniquePunches,
} from './pair-punches.js'
export { defaultPolicy, type RegimeLimits, regimeDefaults } from './policy-defaults.js'
export { MINUTE_MICROS, type ShiftInstance, shiftInstance } from './shift-instance.js'
export { summarize, weekStartOf } from './summarize.js'
export type * from './types.js'
