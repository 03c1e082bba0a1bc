import { type Static, Type } from '@sinclair/typebox'
import { PageQueryFields, PageSchema, timeRangeFields } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'

/**
 * Everything the audit log records (docs/decisions/0017-append-only-audit-log.md): every change to a
 * credential, every token, and console users' sign-ins, failed sign-ins, password changes, invitations and
 * removals.
 */
export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'oauth_app.created',
  'oauth_app.secret_rotated',
  'oauth_app.revoked',
  'oauth_token.issued',
  'oauth_token.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.paused',
  'webhook_endpoint.resumed',
  'webhook_endpoint.deleted',
  'webhook_endpoint.disabled',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.secret_revealed',
  'webhook_endpoint.test_sent',
  'webhook_delivery.retried',
  'webhook_delivery.replayed',
  'admin_token.created',
  'admin_token.revoked',
  'console_user.invited',
  'console_user.removed',
  'console_user.signed_in',
  'console_user.sign_in_failed',
  'console_user.signed_out',
  'console_user.password_changed',
  'console_user.password_reset',
  'punch.manual_added',
  'punch.voided',
  'attendance.config_changed',
  'attendance.recompute_started',
  'attendance.period_locked',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    occurredAt: Type.String({ format: 'date-time' }),
    actor: Type.String({
      description:
        '`cli:<os user>`, `console_user:<user id>`, `admin_token:<token id>`, `oauth_app:<app id>`, or `anonymous` (a failed sign-in).',
    }),
    action: StringEnum(AUDIT_ACTIONS),
    target: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    ip: NullableString({ description: 'The client address, when the action came over HTTP.' }),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: 'AuditEntry', additionalProperties: false },
)

export type AuditEntry = Static<typeof AuditEntrySchema>

/** Actors and target ids as the log holds them: text without control characters (PostgreSQL refuses NUL). */
const AuditText = { minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS } as const

export const AuditListQuerySchema = Type.Object(
  {
    action: Type.Optional(StringEnum(AUDIT_ACTIONS)),
    actor: Type.Optional(
      Type.String({
        ...AuditText,
        description: 'Exactly this actor, e.g. `admin_token:adm_...` or `oauth_app:app_...` (its tokens).',
      }),
    ),
    targetType: Type.Optional(
      Type.String({ pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'e.g. `api_key`, `oauth_app`.' }),
    ),
    targetId: Type.Optional(
      Type.String({ ...AuditText, description: "One object's history, e.g. an OAuth app's (`app_...`)." }),
    ),
    ...timeRangeFields('Occurred'),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)

export type AuditListQuery = Static<typeof AuditListQuerySchema>

export const AuditPageSchema = PageSchema(AuditEntrySchema, 'AuditPage')
