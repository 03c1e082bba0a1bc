import { type Static, Type } from '@sinclair/typebox'
import { CursorSchema, LimitSchema, PageSchema } from './pagination.js'
import { NullableString, StringEnum } from './schema-helpers.js'

/** Everything the audit log records (DESIGN.md §3): every change to a credential, every token. */
export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.revoked',
  'oauth_app.created',
  'oauth_app.secret_rotated',
  'oauth_app.revoked',
  'oauth_token.issued',
  'oauth_token.revoked',
] as const

export type AuditAction = (typeof AUDIT_ACTIONS)[number]

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    occurredAt: Type.String({ format: 'date-time' }),
    actor: Type.String({ description: '`cli:<os user>`, `console:<user id>` or `oauth_app:<app id>`.' }),
    action: StringEnum(AUDIT_ACTIONS),
    target: Type.Object({ type: Type.String(), id: Type.String() }, { additionalProperties: false }),
    ip: NullableString({ description: 'The client address, when the action came over HTTP.' }),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: 'AuditEntry', additionalProperties: false },
)

export type AuditEntry = Static<typeof AuditEntrySchema>

export const AuditListQuerySchema = Type.Object(
  {
    action: Type.Optional(StringEnum(AUDIT_ACTIONS)),
    targetId: Type.Optional(Type.String({ pattern: '^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$' })),
    limit: Type.Optional(LimitSchema),
    cursor: Type.Optional(CursorSchema),
  },
  { additionalProperties: false },
)

export type AuditListQuery = Static<typeof AuditListQuerySchema>

export const AuditPageSchema = PageSchema(AuditEntrySchema, 'AuditPage')
