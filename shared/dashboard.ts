import { type Static, Type } from '@sinclair/typebox'

/** A week of hours and a quarter of days: what the charts show, and a bound on what one request costs. */
export const MAX_DASHBOARD_HOURS = 168
export const MAX_DASHBOARD_DAYS = 90

export const PunchesPerHourQuerySchema = Type.Object(
  {
    hours: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DASHBOARD_HOURS,
        default: 24,
        description: `How many hours, up to and including the current one: 1 to ${MAX_DASHBOARD_HOURS}.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const PunchesPerHourSchema = Type.Object(
  {
    timeZone: Type.String({ description: "The tenant's time zone, in which the hours are told." }),
    data: Type.Array(
      Type.Object(
        {
          hour: Type.String({
            format: 'date-time',
            description: "The hour's start, with the tenant's offset at that time.",
          }),
          count: Type.Integer({ description: 'Punches that happened (punchedAt) in that hour.' }),
        },
        { additionalProperties: false },
      ),
      { description: 'One entry per hour, oldest first; the last is the current hour, so far.' },
    ),
  },
  { title: 'PunchesPerHour', additionalProperties: false },
)

export type PunchesPerHour = Static<typeof PunchesPerHourSchema>

export const DeliveriesPerDayQuerySchema = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_DASHBOARD_DAYS,
        default: 7,
        description: `How many days, up to and including today: 1 to ${MAX_DASHBOARD_DAYS}.`,
      }),
    ),
  },
  { additionalProperties: false },
)

export const DeliveriesPerDaySchema = Type.Object(
  {
    timeZone: Type.String({ description: "The tenant's time zone, in which the days are told." }),
    data: Type.Array(
      Type.Object(
        {
          day: Type.String({ format: 'date', description: 'The local date, `YYYY-MM-DD`.' }),
          succeeded: Type.Integer(),
          failed: Type.Integer({ description: 'Failed so far, with attempts left.' }),
          exhausted: Type.Integer({ description: 'Every attempt failed; no more are scheduled.' }),
          pending: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'Deliveries created on each day, by their status now; one entry per day, oldest first, today last.',
      },
    ),
  },
  { title: 'WebhookDeliveriesPerDay', additionalProperties: false },
)

export type DeliveriesPerDay = Static<typeof DeliveriesPerDaySchema>
