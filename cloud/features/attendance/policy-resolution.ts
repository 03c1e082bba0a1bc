import type { PolicyInput } from '../../../shared/attendance.js'
import { defaultPolicy } from './engine/policy-defaults.js'
import type { Policy, Shift } from './engine/types.js'

/** A policy record's settings: the fields it sets, the rest inherited. */
export type PolicySettings = Omit<PolicyInput, 'group'>

/** Shift windows when a shift does not say: wide enough for a late OUT after overtime. */
export const SHIFT_DEFAULTS = {
  unpaidBreakMinutes: 0,
  earlyWindowMinutes: 120,
  lateWindowMinutes: 240,
  lateGraceMinutes: 0,
  earlyExitGraceMinutes: 0,
} as const

/**
 * The policy a day is computed by: the legal regime's defaults, then what the tenant's policy sets,
 * then what the employee's group's sets (docs/decisions/0085-attendance-days-are-a-pure-function.md).
 * The regime is resolved first, so a group under another regime gets that regime's limits unless
 * the tenant set a limit explicitly.
 */
export function resolvePolicy(tenant: PolicySettings | undefined, group: PolicySettings | undefined): Policy {
  const regime = group?.legalRegime ?? tenant?.legalRegime ?? 'FACTORIES_ACT_1948'
  const policy: Policy = { ...defaultPolicy(regime) }
  for (const settings of [tenant, group]) {
    if (!settings) continue
    for (const [key, value] of Object.entries(settings)) {
      if (value !== undefined && value !== null) (policy as unknown as Record<string, unknown>)[key] = value
    }
  }
  policy.legalRegime = regime
  return policy
}

/** The settings stored as JSON, read back; anything unreadable counts as unset. */
export function parseSettings(text: string): PolicySettings {
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === 'object' && value !== null ? (value as PolicySettings) : {}
  } catch {
    return {}
  }
}

export interface ShiftRowLike {
  code: string
  start_time: string
  end_time: string
  unpaid_break_minutes: number
  early_window_minutes: number
  late_window_minutes: number
  late_grace_minutes: number
  early_exit_grace_minutes: number
}

export function toEngineShift(row: ShiftRowLike): Shift {
  return {
    code: row.code,
    start: row.start_time,
    end: row.end_time,
    unpaidBreakMinutes: row.unpaid_break_minutes,
    earlyWindowMinutes: row.early_window_minutes,
    lateWindowMinutes: row.late_window_minutes,
    lateGraceMinutes: row.late_grace_minutes,
    earlyExitGraceMinutes: row.early_exit_grace_minutes,
  }
}
