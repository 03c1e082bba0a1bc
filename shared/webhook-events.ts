import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { AttendanceDaySchema } from './attendance.js'
import { ApiKeySummarySchema, OAuthAppSummarySchema } from './credentials.js'
import { EmployeeSchema } from './employee.js'
import { PunchSchema } from './punch.js'
import { StringEnum } from './schema-helpers.js'

/**
 * Every event a webhook endpoint can be told of: its name, what it means, and the JSON
 * Schema of its `data`. One table, served at GET /api/public/v1/webhook-event-types, checked by
 * the code that emits events (a name not here does not compile).
 */
export const WEBHOOK_EVENTS = {
  'attendance.punch.created': {
    description: 'A punch was stored in the raw punch log (not sent again for a duplicate).',
    data: PunchSchema,
  },
  'attendance.day.finalized': {
    description:
      "An employee's attendance day became final: the time for late punches after its shift has passed. Sent once per day.",
    data: AttendanceDaySchema,
  },
  'attendance.day.updated': {
    description:
      'A final day changed: a late punch or a correction recomputed it. `day.revision` rises with every change; ' +
      'drop a delivery whose revision is below the last you applied (deliveries may arrive out of order).',
    data: Type.Object(
      {
        day: AttendanceDaySchema,
        previousRevision: Type.Integer(),
        changed: Type.Array(Type.String(), { description: 'The fields of the day whose values changed.' }),
      },
      { additionalProperties: false },
    ),
  },
  'employee.created': {
    description: 'An employee was added to the directory.',
    data: EmployeeSchema,
  },
  'employee.updated': {
    description: "An employee's record changed (the new version).",
    data: EmployeeSchema,
  },
  'api_key.created': {
    description: 'An API key was created (never the secret).',
    data: ApiKeySummarySchema,
  },
  'api_key.revoked': {
    description: 'An API key was revoked.',
    data: ApiKeySummarySchema,
  },
  'oauth_app.created': {
    description: 'An OAuth app was created (never its secret).',
    data: OAuthAppSummarySchema,
  },
  'oauth_app.revoked': {
    description: 'An OAuth app was revoked, and with it every token it held.',
    data: OAuthAppSummarySchema,
  },
  'webhook_endpoint.disabled': {
    description: 'A webhook endpoint was disabled: it answered 410 Gone, or failed for too long.',
    data: Type.Object(
      {
        endpointId: Type.String(),
        url: Type.String(),
        reason: StringEnum(['gone', 'failing'] as const),
        detail: Type.String(),
      },
      { additionalProperties: false },
    ),
  },
  'webhook.test': {
    description: 'Sent on demand by an administrator, to one endpoint, to check it receives and verifies.',
    data: Type.Object(
      { message: Type.String(), endpointId: Type.String(), requestedBy: Type.String() },
      { additionalProperties: false },
    ),
  },
} as const satisfies Record<string, { description: string; data: TSchema }>

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS
export type WebhookEventData<T extends WebhookEventType> = Static<(typeof WEBHOOK_EVENTS)[T]['data']>

export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[]

export function isWebhookEventType(value: string): value is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENTS, value)
}

export const WebhookEventTypeSchema = StringEnum(WEBHOOK_EVENT_TYPES)

export const WebhookEventCatalogSchema = Type.Object(
  {
    data: Type.Array(
      Type.Object(
        {
          type: Type.String(),
          description: Type.String(),
          schema: Type.Unknown({ description: 'JSON Schema of the event body’s `data`.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'WebhookEventCatalog', additionalProperties: false },
)
