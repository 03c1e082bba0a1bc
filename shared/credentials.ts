import { type Static, Type } from '@sinclair/typebox'
import { NullableString, StringEnum } from './schema-helpers.js'
import { ScopeSchema } from './scopes.js'

const CREDENTIAL_STATUSES = ['active', 'expired', 'revoked'] as const

/** An API key as lists show it: never the secret, only enough of it to recognise. */
export const ApiKeySummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key.' }),
    scopes: Type.Array(ScopeSchema),
    rateLimitPerMinute: Type.Integer(),
    status: StringEnum(CREDENTIAL_STATUSES),
    createdAt: Type.String({ format: 'date-time' }),
    expiresAt: Type.String({ format: 'date-time' }),
    lastUsedAt: NullableString({ format: 'date-time', description: 'To the minute.' }),
    revokedAt: NullableString({ format: 'date-time' }),
  },
  { title: 'ApiKey', additionalProperties: false },
)

export type ApiKeySummary = Static<typeof ApiKeySummarySchema>

/** An OAuth app as lists show it: the client id is public; secrets are never shown again. */
export const OAuthAppSummarySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    clientId: Type.String(),
    scopes: Type.Array(ScopeSchema),
    rateLimitPerMinute: Type.Integer(),
    status: StringEnum(['active', 'revoked'] as const),
    createdAt: Type.String({ format: 'date-time' }),
    revokedAt: NullableString({ format: 'date-time' }),
    secrets: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          prefix: Type.String(),
          createdAt: Type.String({ format: 'date-time' }),
          expiresAt: NullableString({
            format: 'date-time',
            description: 'Null for the current secret; when a rotated-out secret stops working.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'OAuthApp', additionalProperties: false },
)

export type OAuthAppSummary = Static<typeof OAuthAppSummarySchema>
