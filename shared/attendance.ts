import { type Static, Type } from '@sinclair/typebox'
import { EmployeeCodeSchema } from './employee.js'
import { PageQueryFields, PageSchema } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'

/**
 * The attendance API's shapes (docs/integrators/attendance.md): the day record, its configuration
 * (shifts, policies, assignments, holidays), corrections and recompute jobs.
 */

export const DAY_TYPES = ['WORKING', 'WEEKLY_OFF', 'HOLIDAY'] as const
export const DAY_STATUSES = ['PRESENT', 'HALF_DAY', 'ABSENT', 'INCOMPLETE', 'OFF'] as const
export const DAY_STATES = ['OPEN', 'PROVISIONAL', 'FINAL', 'LOCKED'] as const
export const DAY_FLAGS = [
  'MISSING_OUT',
  'MISSING_IN',
  'DOUBLE_IN',
  'ORPHAN_OUT',
  'SPREAD_OVER_EXCEEDED',
  'NO_REST_INTERVAL',
  'DAILY_LIMIT_EXCEEDED',
  'WORKED_ON_OFF_DAY',
  'LATE_ENTRY',
  'EARLY_EXIT',
  'PUNCH_AFTER_LOCK',
] as const
export const PUNCH_ROLES = ['IN', 'OUT', 'DUPLICATE', 'IGNORED'] as const
export const PAIRING_MODES = ['TOLERANT', 'FIRST_LAST', 'ALTERNATE'] as const
export const LEGAL_REGIMES = ['FACTORIES_ACT_1948', 'OSH_CODE_2020'] as const
export const OVERTIME_BASES = ['DAILY_LIMIT', 'SHIFT'] as const
export const OVERTIME_ROUNDINGS = ['NONE', 'HALF_HOUR'] as const

export type DayState = (typeof DAY_STATES)[number]
export type DayStatusName = (typeof DAY_STATUSES)[number]

/** `YYYY-MM-DD`, a calendar date in the tenant's time zone. */
export const DATE_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$'
export const DateSchema = (description: string) =>
  Type.String({ pattern: DATE_PATTERN, description, examples: ['2026-11-21'] })

/** `HH:MM`, a local wall time. */
export const WALL_TIME_PATTERN = '^([01]\\d|2[0-3]):[0-5]\\d$'

/** A summary or an export spans at most this many dates, both ends included (a payroll period, with room). */
export const MAX_RANGE_DAYS = 62
/** A recompute or a lock spans at most this many dates, both ends included. */
export const MAX_RECOMPUTE_DAYS = 92
/** At most this many employee codes in one recompute request. */
export const MAX_RECOMPUTE_EMPLOYEES = 1_000

const Minutes = (description: string, maximum = 10_080) => Type.Integer({ minimum: 0, maximum, description })
const Code = Type.String({ minLength: 1, maxLength: 32, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$' })
const GroupName = NullableString({
  minLength: 1,
  maxLength: 128,
  pattern: NO_CONTROL_CHARACTERS,
  description: "An employee group: employees whose `department` is this. null: the tenant's default.",
})

export const DayPunchSchema = Type.Object(
  {
    id: Type.String({ description: 'The punch (`pun_...`).' }),
    punchType: StringEnum(['IN', 'OUT'] as const),
    punchedAt: Type.String({ format: 'date-time' }),
    role: StringEnum(PUNCH_ROLES),
  },
  { additionalProperties: false },
)

const PairSchema = Type.Object(
  {
    in: NullableString({ format: 'date-time' }),
    out: NullableString({ format: 'date-time' }),
    minutes: Type.Integer(),
  },
  { additionalProperties: false },
)

const DayFields = {
  id: Type.String({ description: 'Hajri id (`day_...`).' }),
  employeeCode: EmployeeCodeSchema,
  workDate: DateSchema(
    "The date the scheduled shift starts, in the tenant's time zone: a night shift is one day (Factories Act s.57).",
  ),
  shiftCode: NullableString({
    description: 'null: no shift was assigned; the day is the local calendar day.',
  }),
  scheduledStart: NullableString({ format: 'date-time' }),
  scheduledEnd: NullableString({ format: 'date-time' }),
  dayType: StringEnum(DAY_TYPES),
  status: StringEnum(DAY_STATUSES),
  state: StringEnum(DAY_STATES, {
    description:
      'OPEN until the shift ends; PROVISIONAL while late punches may still arrive; FINAL after; LOCKED once payroll closed the period.',
  }),
  firstIn: NullableString({ format: 'date-time' }),
  lastOut: NullableString({ format: 'date-time' }),
  workedMinutes: Type.Integer(),
  breakMinutes: Type.Integer(),
  lateMinutes: Type.Integer(),
  earlyExitMinutes: Type.Integer(),
  overtimeMinutes: Type.Integer(),
  spreadOverMinutes: Type.Integer(),
  flags: Type.Array(StringEnum(DAY_FLAGS)),
  punches: Type.Array(DayPunchSchema),
  revision: Type.Integer({
    minimum: 1,
    description:
      'Raised each time the computed day changes (a figure, a flag, a punch or its role). Becoming FINAL or ' +
      'LOCKED, and PUNCH_AFTER_LOCK, change `state`, `flags` and `updatedAt` but not the revision.',
  }),
  updatedAt: Type.String({
    format: 'date-time',
    description:
      'Server-assigned, strictly increasing within a tenant; also set when the day becomes final or locked.',
  }),
}

export const AttendanceDaySchema = Type.Object(DayFields, {
  title: 'AttendanceDay',
  additionalProperties: false,
})
export type AttendanceDay = Static<typeof AttendanceDaySchema>

export const AttendanceDayDetailSchema = Type.Object(
  {
    ...DayFields,
    pairs: Type.Array(PairSchema),
    explanation: Type.Array(
      Type.Object({ field: Type.String(), text: Type.String() }, { additionalProperties: false }),
    ),
  },
  { title: 'AttendanceDayDetail', additionalProperties: false },
)
export type AttendanceDayDetail = Static<typeof AttendanceDayDetailSchema>

export const AttendanceDayPageSchema = PageSchema(AttendanceDaySchema, 'AttendanceDayPage')

export const AttendanceDayListQuerySchema = Type.Object(
  {
    from: Type.Optional(DateSchema('First work date (inclusive).')),
    to: Type.Optional(DateSchema('Last work date (inclusive).')),
    employeeCode: Type.Optional(EmployeeCodeSchema),
    status: Type.Optional(StringEnum(DAY_STATUSES)),
    state: Type.Optional(StringEnum(DAY_STATES)),
    updatedSince: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Incremental sync: days whose `updatedAt` is at or after this, oldest change first. Store the last `updatedAt` you saw and pass it next time.',
      }),
    ),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)
export type AttendanceDayListQuery = Static<typeof AttendanceDayListQuerySchema>

export const AttendanceDayParamsSchema = Type.Object(
  { employeeCode: EmployeeCodeSchema, workDate: DateSchema('The work date.') },
  { additionalProperties: false },
)

export const AttendanceExportQuerySchema = Type.Object(
  {
    from: DateSchema('First work date (inclusive).'),
    to: DateSchema(`Last work date (inclusive); \`from\` to \`to\` spans at most ${MAX_RANGE_DAYS} dates.`),
    employeeCode: Type.Optional(EmployeeCodeSchema),
  },
  { additionalProperties: false },
)
export type AttendanceExportQuery = Static<typeof AttendanceExportQuerySchema>

const WeekSchema = Type.Object(
  {
    weekStart: Type.String(),
    workedMinutes: Type.Integer(),
    dailyOvertimeMinutes: Type.Integer(),
    weeklyOvertimeMinutes: Type.Integer(),
  },
  { additionalProperties: false },
)

export const AttendanceSummarySchema = Type.Object(
  {
    employeeCode: EmployeeCodeSchema,
    from: Type.String(),
    to: Type.String(),
    days: Type.Integer(),
    present: Type.Integer(),
    halfDay: Type.Integer(),
    absent: Type.Integer(),
    incomplete: Type.Integer(),
    off: Type.Integer(),
    workedMinutes: Type.Integer(),
    lateMinutes: Type.Integer(),
    earlyExitMinutes: Type.Integer(),
    dailyOvertimeMinutes: Type.Integer(),
    weeklyOvertimeMinutes: Type.Integer({
      description: "Counted in the period that holds the week's last day, and only there: never twice.",
    }),
    weeks: Type.Array(WeekSchema),
  },
  { title: 'AttendanceSummary', additionalProperties: false },
)
export type AttendanceSummary = Static<typeof AttendanceSummarySchema>

export const AttendanceSummaryListSchema = Type.Object(
  { data: Type.Array(AttendanceSummarySchema), nextCursor: NullableString() },
  { title: 'AttendanceSummaryPage', additionalProperties: false },
)
export const AttendanceSummaryQuerySchema = Type.Object(
  {
    from: DateSchema('First work date (inclusive).'),
    to: DateSchema(`Last work date (inclusive); \`from\` to \`to\` spans at most ${MAX_RANGE_DAYS} dates.`),
    employeeCode: Type.Optional(EmployeeCodeSchema),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)
export type AttendanceSummaryQuery = Static<typeof AttendanceSummaryQuerySchema>

// Configuration.

export const ShiftInputSchema = Type.Object(
  {
    code: Code,
    name: Type.Optional(NullableString({ maxLength: 128, pattern: NO_CONTROL_CHARACTERS })),
    start: Type.String({ pattern: WALL_TIME_PATTERN, description: 'Local `HH:MM`.', examples: ['22:00'] }),
    end: Type.String({
      pattern: WALL_TIME_PATTERN,
      description: 'Local `HH:MM`; at or before `start`, the shift ends the next day.',
      examples: ['06:00'],
    }),
    unpaidBreakMinutes: Type.Optional(Minutes('Deducted when the punches show no break.', 240)),
    earlyWindowMinutes: Type.Optional(
      Minutes('Punches this long before the start count for the shift. Default 120.', 720),
    ),
    lateWindowMinutes: Type.Optional(
      Minutes('Punches this long after the end count for the shift. Default 240.', 720),
    ),
    lateGraceMinutes: Type.Optional(Minutes('An IN this long after the start is not late.', 240)),
    earlyExitGraceMinutes: Type.Optional(
      Minutes('An OUT this long before the end is not an early exit.', 240),
    ),
  },
  { title: 'ShiftInput', additionalProperties: false },
)
export type ShiftInput = Static<typeof ShiftInputSchema>

export const ShiftSchema = Type.Object(
  {
    code: Type.String(),
    name: NullableString(),
    start: Type.String(),
    end: Type.String(),
    unpaidBreakMinutes: Type.Integer(),
    earlyWindowMinutes: Type.Integer(),
    lateWindowMinutes: Type.Integer(),
    lateGraceMinutes: Type.Integer(),
    earlyExitGraceMinutes: Type.Integer(),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Shift', additionalProperties: false },
)
export type ShiftView = Static<typeof ShiftSchema>

export const ShiftParamsSchema = Type.Object({ code: Code }, { additionalProperties: false })

/** Every policy field but the group may be left out: it then comes from the tenant's policy, or the regime's defaults. */
export const PolicyFieldsSchema = {
  legalRegime: Type.Optional(StringEnum(LEGAL_REGIMES)),
  fullDayMinutes: Type.Optional(Minutes('At least this much work is a full day.', 1440)),
  halfDayMinutes: Type.Optional(
    Minutes('At least this much (and less than full) is a half day; less is absent.', 1440),
  ),
  pairing: Type.Optional(StringEnum(PAIRING_MODES)),
  duplicateWindowSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })),
  countEarlyArrival: Type.Optional(Type.Boolean()),
  overtimeBasis: Type.Optional(StringEnum(OVERTIME_BASES)),
  overtimeToleranceMinutes: Type.Optional(
    Minutes('With basis SHIFT: minutes on each side that are not overtime.', 240),
  ),
  overtimeRounding: Type.Optional(StringEnum(OVERTIME_ROUNDINGS)),
  dailyLimitMinutes: Type.Optional(Minutes('Factories Act s.54: 540.', 1440)),
  weeklyLimitMinutes: Type.Optional(Minutes('Factories Act s.51: 2880.')),
  spreadOverLimitMinutes: Type.Optional(Minutes('Factories Act s.56: 630.', 1440)),
  restAfterMinutes: Type.Optional(Minutes('Factories Act s.55: 300.', 1440)),
  restMinutes: Type.Optional(Minutes('Factories Act s.55: 30.', 240)),
  weekStart: Type.Optional(Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday.' })),
  weeklyOffDays: Type.Optional(
    Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { maxItems: 7, uniqueItems: true }),
  ),
  finalizeAfterMinutes: Type.Optional(
    Minutes('After the late window, how long late punches may still arrive.', 20_160),
  ),
  maxShiftMinutes: Type.Optional(Minutes('An OUT joins an open IN this long before it.', 1440)),
}

export const PolicyInputSchema = Type.Object(
  { group: Type.Optional(GroupName), ...PolicyFieldsSchema },
  { title: 'PolicyInput', additionalProperties: false },
)
export type PolicyInput = Static<typeof PolicyInputSchema>

export const PolicySchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`pol_...`).' }),
    group: NullableString(),
    /** What was set on this record; the rest is inherited. */
    settings: Type.Object(PolicyFieldsSchema, { additionalProperties: false }),
    /** The policy days are computed by: the regime's defaults, the tenant's settings, then the group's. */
    effective: Type.Required(Type.Object(PolicyFieldsSchema, { additionalProperties: false })),
    version: Type.Integer(),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Policy', additionalProperties: false },
)
export type PolicyView = Static<typeof PolicySchema>

export const AssignmentInputSchema = Type.Object(
  {
    employeeCode: Type.Optional(NullableString({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' })),
    group: Type.Optional(GroupName),
    shiftCode: Code,
    effectiveFrom: DateSchema('First date (inclusive).'),
    effectiveTo: Type.Optional(
      NullableString({ pattern: DATE_PATTERN, description: 'Last date (inclusive); null: open-ended.' }),
    ),
  },
  {
    title: 'AssignmentInput',
    additionalProperties: false,
    description:
      'Give employeeCode, or group, or neither (the tenant default). An employee’s own assignment wins over its group’s, which wins over the default.',
  },
)
export type AssignmentInput = Static<typeof AssignmentInputSchema>

export const AssignmentSchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`asg_...`).' }),
    employeeCode: NullableString(),
    group: NullableString(),
    shiftCode: Type.String(),
    effectiveFrom: Type.String(),
    effectiveTo: NullableString(),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Assignment', additionalProperties: false },
)
export type AssignmentView = Static<typeof AssignmentSchema>

export const HolidayInputSchema = Type.Object(
  {
    date: DateSchema('The holiday.'),
    name: Type.String({ minLength: 1, maxLength: 128, pattern: NO_CONTROL_CHARACTERS }),
    group: Type.Optional(GroupName),
  },
  { title: 'HolidayInput', additionalProperties: false },
)
export type HolidayInput = Static<typeof HolidayInputSchema>

export const HolidaySchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`hol_...`).' }),
    date: Type.String(),
    name: Type.String(),
    group: NullableString(),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Holiday', additionalProperties: false },
)
export type HolidayView = Static<typeof HolidaySchema>

export const IdParamsSchema = Type.Object(
  { id: Type.String({ minLength: 30, maxLength: 30, pattern: '^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$' }) },
  { additionalProperties: false },
)

export const RecomputeInputSchema = Type.Object(
  {
    from: DateSchema('First work date (inclusive); today at the latest, in the tenant’s time zone.'),
    to: DateSchema(
      `Last work date (inclusive); \`from\` to \`to\` spans at most ${MAX_RECOMPUTE_DAYS} dates. A date after today is taken as today.`,
    ),
    employeeCodes: Type.Optional(
      Type.Array(EmployeeCodeSchema, { minItems: 1, maxItems: MAX_RECOMPUTE_EMPLOYEES, uniqueItems: true }),
    ),
  },
  { title: 'RecomputeInput', additionalProperties: false },
)
export type RecomputeInput = Static<typeof RecomputeInputSchema>

export const RecomputeJobSchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`job_...`).' }),
    status: StringEnum(['queued', 'running', 'done', 'failed'] as const),
    from: Type.String(),
    to: Type.String(),
    employees: Type.Integer({ description: 'Employees to recompute.' }),
    employeesDone: Type.Integer(),
    daysChanged: Type.Integer(),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: NullableString({ format: 'date-time' }),
    error: NullableString(),
  },
  { title: 'RecomputeJob', additionalProperties: false },
)
export type RecomputeJob = Static<typeof RecomputeJobSchema>

export const LockInputSchema = Type.Object(
  {
    from: DateSchema('First work date (inclusive).'),
    to: DateSchema(
      `Last work date (inclusive); \`from\` to \`to\` spans at most ${MAX_RECOMPUTE_DAYS} dates.`,
    ),
  },
  { title: 'LockInput', additionalProperties: false },
)
export type LockInput = Static<typeof LockInputSchema>

export const VoidInputSchema = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, pattern: NO_CONTROL_CHARACTERS }) },
  { title: 'VoidInput', additionalProperties: false },
)

export const CorrectionSchema = Type.Object(
  {
    punchId: Type.String(),
    kind: StringEnum(['manual', 'void'] as const),
    reason: Type.String(),
    actor: Type.String({
      description: 'The credential that made it: an API key or OAuth app id, or a console user.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Correction', additionalProperties: false },
)
export type Correction = Static<typeof CorrectionSchema>
