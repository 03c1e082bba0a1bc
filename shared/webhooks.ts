import { type Static, Type } from '@sinclair/typebox'
import { idPattern } from './ids.js'
import { PageQueryFields, PageSchema, timeRangeFields } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'
import { WebhookEventTypeSchema } from './webhook-events.js'

export const ENDPOINT_STATUSES = ['active', 'paused', 'disabled'] as const

/**
 * A delivery's life: `pending` (an attempt is due), `failed` (an attempt failed; another is
 * scheduled), `succeeded` (a 2xx), `exhausted` (the schedule ran out). Deliveries to a paused or
 * disabled endpoint wait, pending or failed, until it is active again.
 */
export const DELIVERY_STATUSES = ['pending', 'failed', 'succeeded', 'exhausted'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: Type.String(),
    events: Type.Array(WebhookEventTypeSchema, { description: 'Empty: every event.' }),
    status: StringEnum(ENDPOINT_STATUSES),
    disabledReason: NullableString(),
    failingSince: NullableString({ format: 'date-time' }),
    secrets: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          createdAt: Type.String({ format: 'date-time' }),
          expiresAt: NullableString({ format: 'date-time', description: 'Null for the current secret.' }),
        },
        { additionalProperties: false },
      ),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookEndpoint', additionalProperties: false },
)

export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>

export const WebhookEndpointInputSchema = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'https:// (plain http only for allowlisted hosts).',
    }),
    events: Type.Optional(
      Type.Array(WebhookEventTypeSchema, { maxItems: 50, description: 'Default: every event.' }),
    ),
    description: Type.Optional(Type.String({ maxLength: 500, pattern: NO_CONTROL_CHARACTERS })),
  },
  { title: 'WebhookEndpointInput', additionalProperties: false },
)

export type WebhookEndpointInput = Static<typeof WebhookEndpointInputSchema>

export const WebhookEndpointUpdateSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    events: Type.Optional(Type.Array(WebhookEventTypeSchema, { maxItems: 50 })),
    description: Type.Optional(Type.String({ maxLength: 500, pattern: NO_CONTROL_CHARACTERS })),
  },
  { title: 'WebhookEndpointUpdate', additionalProperties: false },
)

const WebhookAttemptSchema = Type.Object(
  {
    number: Type.Integer(),
    trigger: StringEnum(['automatic', 'manual'] as const),
    at: Type.String({ format: 'date-time' }),
    durationMs: Type.Integer(),
    responseStatus: Type.Union([Type.Integer(), Type.Null()]),
    responseBody: NullableString({ description: 'The first KiB of the answer.' }),
    error: NullableString(),
  },
  { title: 'WebhookAttempt', additionalProperties: false },
)

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String(),
    endpointId: Type.String(),
    messageId: Type.String({ description: 'The webhook-id header: the same on every attempt.' }),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer(),
    nextAttemptAt: NullableString({ format: 'date-time' }),
    lastAttemptAt: NullableString({ format: 'date-time' }),
    payload: Type.Object(
      { size: Type.Integer({ description: 'Bytes.' }), sha256: Type.String({ description: 'Hex.' }) },
      { additionalProperties: false },
    ),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'WebhookDelivery', additionalProperties: false },
)

export type WebhookDelivery = Static<typeof WebhookDeliverySchema>

export const WebhookDeliveryDetailSchema = Type.Composite(
  [
    WebhookDeliverySchema,
    Type.Object({
      body: Type.String({ description: 'The JSON body as sent.' }),
      attemptLog: Type.Array(WebhookAttemptSchema),
    }),
  ],
  { title: 'WebhookDeliveryDetail', additionalProperties: false },
)

export type WebhookDeliveryDetail = Static<typeof WebhookDeliveryDetailSchema>

export const DeliveryListQuerySchema = Type.Object(
  {
    endpointId: Type.Optional(Type.String({ pattern: idPattern('webhookEndpoint') })),
    status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
    eventType: Type.Optional(WebhookEventTypeSchema),
    ...timeRangeFields('Created'),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)

export type DeliveryListQuery = Static<typeof DeliveryListQuerySchema>

export const DeliveryPageSchema = PageSchema(WebhookDeliverySchema, 'WebhookDeliveryPage')

const ENDPOINT_ID = idPattern('webhookEndpoint')

export const EndpointParamsSchema = Type.Object(
  { endpointId: Type.String({ pattern: ENDPOINT_ID }) },
  { additionalProperties: false },
)

export const DeliveryParamsSchema = Type.Object(
  { deliveryId: Type.String({ pattern: idPattern('webhookDelivery') }) },
  { additionalProperties: false },
)

export const WebhookEndpointListSchema = Type.Object(
  {
    data: Type.Array(WebhookEndpointSchema),
    nextCursor: Type.Null({ description: 'A tenant has few endpoints: one page holds them all.' }),
  },
  { title: 'WebhookEndpointList', additionalProperties: false },
)

export const CreatedWebhookEndpointSchema = Type.Composite(
  [
    WebhookEndpointSchema,
    Type.Object({
      secret: Type.String({ description: 'The signing secret (`whsec_...`). Verify deliveries with it.' }),
    }),
  ],
  { title: 'CreatedWebhookEndpoint', additionalProperties: false },
)

export const SecretRotationInputSchema = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30 * 86_400,
        description: 'How long the old secret keeps signing beside the new one. Default 86400 (a day).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const RotatedWebhookSecretSchema = Type.Object(
  {
    secret: Type.String({ description: 'The new signing secret.' }),
    previousSecretsExpireAt: Type.String({ format: 'date-time' }),
  },
  { title: 'RotatedWebhookSecret', additionalProperties: false },
)

export const WebhookSecretSchema = Type.Object(
  { secret: Type.String({ description: 'The current signing secret.' }) },
  { title: 'WebhookSecret', additionalProperties: false },
)

export const TestEventSentSchema = Type.Object(
  { messageId: Type.String({ description: 'The webhook-id the test event is delivered with.' }) },
  { title: 'TestEventSent', additionalProperties: false },
)

export const ReplayInputSchema = Type.Object(
  { since: Type.String({ format: 'date-time', description: 'Deliveries created at or after this.' }) },
  { additionalProperties: false },
)

export const ReplayResultSchema = Type.Object(
  { replayed: Type.Integer({ description: 'Failed and exhausted deliveries scheduled again.' }) },
  { title: 'ReplayResult', additionalProperties: false },
)
