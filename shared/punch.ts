import { type Static, Type } from '@sinclair/typebox'
import { EmployeeCodeSchema } from './employee.js'
import { idPattern } from './ids.js'
import { PageQueryFields, PageSchema, timeRangeFields } from './pagination.js'
import { ProblemSchema } from './problem.js'
import { NullableString, StringEnum } from './schema-helpers.js'

const PUNCH_TYPES = ['IN', 'OUT'] as const

/** At most this many punches in one batch request. */
export const MAX_BATCH_PUNCHES = 500

/** A punch may not claim to be from further in the future than this (device clocks drift). */
export const MAX_FUTURE_SKEW_SECONDS = 300

const ShortText = (description: string) =>
  NullableString({
    minLength: 1,
    maxLength: 64,
    pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$',
    description,
  })

export const PunchInputSchema = Type.Object(
  {
    employeeCode: EmployeeCodeSchema,
    punchType: StringEnum(PUNCH_TYPES),
    punchedAt: Type.Optional(
      NullableString({
        format: 'date-time',
        description:
          'When the employee punched, RFC 3339 with offset. Default: when Hajri received it. ' +
          'Refused if more than 5 minutes ahead, or older than the tenant backfill window (90 days by default).',
        examples: ['2026-11-21T09:00:00+05:30'],
      }),
    ),
    deviceId: Type.Optional(ShortText('The device or gateway that read the punch.')),
    source: Type.Optional(ShortText('What sent it, e.g. `hajri-agent`, `mobile-app`.')),
    reason: Type.Optional(
      NullableString({
        minLength: 1,
        maxLength: 500,
        pattern: '^[^\\u0000-\\u001F\\u007F]*$',
        description:
          'Only with `source: manual`, and then required: why a person added this punch (a correction). ' +
          'A manual punch needs the scope attendance:admin besides attendance:write, and is audited.',
      }),
    ),
    externalId: Type.Optional(
      NullableString({
        minLength: 1,
        maxLength: 128,
        pattern: '^[\\x21-\\x7E]+$',
        description:
          'Your permanent id for this punch. A punch with an externalId already stored is not stored again: ' +
          'the original is returned.',
      }),
    ),
  },
  { title: 'PunchInput', additionalProperties: false },
)

export type PunchInput = Static<typeof PunchInputSchema>

export const PunchSchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`pun_...`).' }),
    employeeCode: EmployeeCodeSchema,
    punchType: StringEnum(PUNCH_TYPES),
    punchedAt: Type.String({ format: 'date-time', description: "In the tenant's time zone offset." }),
    receivedAt: Type.String({ format: 'date-time', description: 'When Hajri stored it (UTC).' }),
    deviceId: NullableString(),
    source: NullableString(),
    externalId: NullableString(),
  },
  { title: 'Punch', additionalProperties: false },
)

export type Punch = Static<typeof PunchSchema>

export const PunchParamsSchema = Type.Object(
  {
    punchId: Type.String({ pattern: idPattern('punch'), description: 'A punch id (`pun_...`).' }),
  },
  { additionalProperties: false },
)

export const PunchBatchInputSchema = Type.Object(
  {
    punches: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: MAX_BATCH_PUNCHES,
      description: `1 to ${MAX_BATCH_PUNCHES} PunchInput objects. Each is checked on its own: a bad one is reported and the others are stored.`,
    }),
  },
  { title: 'PunchBatchInput', additionalProperties: false },
)

/**
 * A batch as a client builds it. The schema takes any items, so that the cloud checks each on its
 * own and reports a bad one without refusing the others; a well-behaved client sends PunchInputs.
 */
export interface PunchBatchInput {
  punches: PunchInput[]
}

const BATCH_ITEM_STATUSES = ['created', 'duplicate', 'rejected'] as const

const PunchBatchResultSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: 'Position of the punch in the request.' }),
    status: StringEnum(BATCH_ITEM_STATUSES),
    punch: Type.Optional(PunchSchema),
    problem: Type.Optional(ProblemSchema),
  },
  { title: 'PunchBatchResult', additionalProperties: false },
)

export const PunchBatchResponseSchema = Type.Object(
  {
    summary: Type.Object(
      {
        received: Type.Integer(),
        created: Type.Integer(),
        duplicate: Type.Integer(),
        rejected: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    results: Type.Array(PunchBatchResultSchema),
  },
  { title: 'PunchBatchResponse', additionalProperties: false },
)

export type PunchBatchResponse = Static<typeof PunchBatchResponseSchema>

export const PunchListQuerySchema = Type.Object(
  {
    employeeCode: Type.Optional(EmployeeCodeSchema),
    ...timeRangeFields('Punched'),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)

export type PunchListQuery = Static<typeof PunchListQuerySchema>

export const PunchPageSchema = PageSchema(PunchSchema, 'PunchPage')
