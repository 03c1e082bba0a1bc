import type { LegalRegime, Policy } from './types.js'

/** The limits a legal regime sets; a tenant may override any of them in its policy. */
export interface RegimeLimits {
  dailyLimitMinutes: number
  weeklyLimitMinutes: number
  spreadOverLimitMinutes: number
  restAfterMinutes: number
  restMinutes: number
}

const LIMITS: Record<LegalRegime, RegimeLimits> = {
  FACTORIES_ACT_1948: {
    // s.54: no more than nine hours in a day; s.51: no more than forty-eight hours in a week.
    dailyLimitMinutes: 540,
    weeklyLimitMinutes: 2880,
    // s.56: the spread-over, intervals for rest included, no more than ten and a half hours.
    spreadOverLimitMinutes: 630,
    // s.55: no more than five hours before an interval for rest of at least half an hour.
    restAfterMinutes: 300,
    restMinutes: 30,
  },
  OSH_CODE_2020: {
    // OSH Code s.25: eight hours a day; the 2020 draft rules add forty-eight hours a week, a
    // twelve-hour spread-over and a half-hour rest after five hours.
    dailyLimitMinutes: 480,
    weeklyLimitMinutes: 2880,
    spreadOverLimitMinutes: 720,
    restAfterMinutes: 300,
    restMinutes: 30,
  },
}

/** The limits of a regime (a fresh object: callers may change it). */
export function regimeDefaults(regime: LegalRegime): RegimeLimits {
  return { ...LIMITS[regime] }
}

/** A complete policy with the regime's limits and Hajri's defaults for everything else. */
export function defaultPolicy(regime: LegalRegime = 'FACTORIES_ACT_1948'): Policy {
  return {
    legalRegime: regime,
    // Seven hours: an eight-hour shift with its half-hour break, and a little lateness, is a full day.
    fullDayMinutes: 420,
    halfDayMinutes: 240,
    pairing: 'TOLERANT',
    // Terminals re-send, and workers punch twice when unsure the first one took.
    duplicateWindowSeconds: 120,
    // Arriving early is not work unless the employer asks for it.
    countEarlyArrival: false,
    overtimeBasis: 'DAILY_LIMIT',
    overtimeToleranceMinutes: 0,
    overtimeRounding: 'NONE',
    ...regimeDefaults(regime),
    weekStart: 1,
    weeklyOffDays: [0],
    finalizeAfterMinutes: 240,
    maxShiftMinutes: 960,
  }
}
