import type { PolicySettings } from './api-types.js'
import { wholeNumbers } from './attendance-form.js'
import { formatMinutes } from './attendance-time.js'

export type PolicyKey = keyof PolicySettings
/** The fields typed as text or chosen from a list: all but the weekly off days. */
export type PolicyTextKey = Exclude<PolicyKey, 'weeklyOffDays'>

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

type FieldKind =
  | { kind: 'minutes' | 'seconds' }
  | { kind: 'choice'; choices: Record<string, string> }
  | { kind: 'boolean' }
  | { kind: 'weekday' }

export type PolicyField = { name: PolicyTextKey; label: string; hint: string } & FieldKind

/** Every policy field but the weekly off days, in the order the form shows them. */
export const POLICY_FIELDS: PolicyField[] = [
  {
    name: 'legalRegime',
    label: 'Legal regime',
    hint: 'Where the limits below come from when no policy sets them.',
    kind: 'choice',
    choices: { FACTORIES_ACT_1948: 'Factories Act, 1948', OSH_CODE_2020: 'OSH Code, 2020' },
  },
  {
    name: 'fullDayMinutes',
    label: 'Full day (minutes)',
    hint: 'At least this much work is a full day.',
    kind: 'minutes',
  },
  {
    name: 'halfDayMinutes',
    label: 'Half day (minutes)',
    hint: 'At least this much (and less than a full day) is a half day; less is absent.',
    kind: 'minutes',
  },
  {
    name: 'pairing',
    label: 'Punch pairing',
    hint: 'How IN and OUT punches are matched into worked periods.',
    kind: 'choice',
    choices: {
      TOLERANT: 'By type: IN opens, OUT closes; repeats are duplicates',
      FIRST_LAST: 'First IN to last OUT, whatever lies between',
      ALTERNATE: 'Alternating: types ignored, IN, OUT, IN… in time order',
    },
  },
  {
    name: 'duplicateWindowSeconds',
    label: 'Duplicate window (seconds)',
    hint: 'A second punch of the same type this soon after another is a duplicate.',
    kind: 'seconds',
  },
  {
    name: 'countEarlyArrival',
    label: 'Count early arrival',
    hint: 'Whether time before the shift starts counts as worked.',
    kind: 'boolean',
  },
  {
    name: 'overtimeBasis',
    label: 'Overtime basis',
    hint: "Overtime is work beyond the daily limit, or beyond the shift's scheduled work.",
    kind: 'choice',
    choices: { DAILY_LIMIT: 'Beyond the daily limit', SHIFT: "Beyond the shift's scheduled work" },
  },
  {
    name: 'overtimeToleranceMinutes',
    label: 'Overtime tolerance (minutes)',
    hint: 'With the shift as basis: minutes on each side that are not overtime.',
    kind: 'minutes',
  },
  {
    name: 'overtimeRounding',
    label: 'Overtime rounding',
    hint: 'Half hours: 15 to 30 minutes count as 30, more than 30 as 60, per started hour.',
    kind: 'choice',
    choices: { NONE: 'None: exact minutes', HALF_HOUR: 'Half hours (OSH draft rule)' },
  },
  {
    name: 'dailyLimitMinutes',
    label: 'Daily limit (minutes)',
    hint: 'Factories Act s.54: 540.',
    kind: 'minutes',
  },
  {
    name: 'weeklyLimitMinutes',
    label: 'Weekly limit (minutes)',
    hint: 'Factories Act s.51: 2880.',
    kind: 'minutes',
  },
  {
    name: 'spreadOverLimitMinutes',
    label: 'Spread-over limit (minutes)',
    hint: 'Factories Act s.56: 630.',
    kind: 'minutes',
  },
  {
    name: 'restAfterMinutes',
    label: 'Rest due after (minutes)',
    hint: 'Factories Act s.55: 300 minutes of work without a rest.',
    kind: 'minutes',
  },
  { name: 'restMinutes', label: 'Rest interval (minutes)', hint: 'Factories Act s.55: 30.', kind: 'minutes' },
  { name: 'weekStart', label: 'Week starts on', hint: 'For the weekly limit and overtime.', kind: 'weekday' },
  {
    name: 'finalizeAfterMinutes',
    label: 'Final after (minutes)',
    hint: 'After the late window, how long late punches may still arrive before the day is final.',
    kind: 'minutes',
  },
  {
    name: 'maxShiftMinutes',
    label: 'Longest shift (minutes)',
    hint: 'An OUT joins an open IN at most this long before it.',
    kind: 'minutes',
  },
]

/** A policy as its form holds it: '' for a field left to inherit, `offDays` null likewise. */
export interface PolicyForm {
  texts: Record<PolicyTextKey, string>
  offDays: number[] | null
}

export function policyToForm(settings: PolicySettings): PolicyForm {
  const texts = {} as Record<PolicyTextKey, string>
  for (const field of POLICY_FIELDS) {
    const value = settings[field.name]
    texts[field.name] = value === undefined ? '' : String(value)
  }
  return { texts, offDays: settings.weeklyOffDays ? [...settings.weeklyOffDays] : null }
}

/** The settings a form sets (the fields left empty are left out), or why it cannot be sent. */
export function formToPolicy(form: PolicyForm): { settings: PolicySettings; error?: string } {
  const numeric = POLICY_FIELDS.filter(
    (f) => f.kind === 'minutes' || f.kind === 'seconds' || f.kind === 'weekday',
  )
  const { values, error } = wholeNumbers(
    form.texts,
    Object.fromEntries(numeric.map((f) => [f.name, f.label])) as Record<PolicyTextKey, string>,
  )
  const settings: Record<string, unknown> = { ...values }
  for (const field of POLICY_FIELDS) {
    const text = form.texts[field.name]
    if (text === '') continue
    if (field.kind === 'boolean') settings[field.name] = text === 'true'
    else if (field.kind === 'choice') settings[field.name] = text
  }
  if (form.offDays) settings.weeklyOffDays = [...form.offDays].sort((a, b) => a - b)
  return error ? { settings: settings as PolicySettings, error } : { settings: settings as PolicySettings }
}

/** A setting's value for people: "540 min (9:00)", "Yes", "Sunday", "Factories Act, 1948". */
export function describeSetting(name: PolicyKey, value: unknown): string {
  if (value === undefined || value === null) return 'Not set'
  if (name === 'weeklyOffDays') {
    const days = value as number[]
    return days.length === 0 ? 'None' : days.map((d) => WEEKDAYS[d] ?? String(d)).join(', ')
  }
  const field = POLICY_FIELDS.find((f) => f.name === name)
  switch (field?.kind) {
    case 'minutes':
      return `${value} min (${formatMinutes(value as number)})`
    case 'seconds':
      return `${value} s`
    case 'boolean':
      return value ? 'Yes' : 'No'
    case 'weekday':
      return WEEKDAYS[value as number] ?? String(value)
    case 'choice':
      return field.choices[value as string] ?? String(value)
    default:
      return String(value)
  }
}

export const POLICY_LABELS: Record<PolicyKey, string> = {
  ...(Object.fromEntries(
    POLICY_FIELDS.map((f) => [f.name, f.label.replace(/ \((minutes|seconds)\)$/, '')]),
  ) as Record<PolicyTextKey, string>),
  weeklyOffDays: 'Weekly off days',
}
