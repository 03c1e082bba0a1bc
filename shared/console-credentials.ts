import { Type } from '@sinclair/typebox'
import { ApiKeySummarySchema, OAuthAppSummarySchema } from './credentials.js'
import { idPattern } from './ids.js'
import { SinglePageSchema } from './pagination.js'
import { NO_CONTROL_CHARACTERS } from './schema-helpers.js'
import { SCOPES, ScopeSchema } from './scopes.js'

// The console API's requests and answers for API keys and OAuth apps. The bounds
// repeat what ApiKeyService and OAuthAppService check, so that the OpenAPI document states them and
// a wrong field is reported with its pointer; the services stay the authority (the CLI calls them).

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS })

const Scopes = Type.Array(ScopeSchema, {
  minItems: 1,
  maxItems: SCOPES.length,
  uniqueItems: true,
  description: `What the credential may do: ${SCOPES.join(', ')}.`,
})

const RateLimitPerMinute = Type.Integer({
  minimum: 1,
  maximum: 100_000,
  description: 'Requests a minute this credential may make. Default 600.',
})

export const ApiKeyInputSchema = Type.Object(
  {
    name: Type.Optional(Name),
    scopes: Scopes,
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 60,
        maximum: 2 * 365 * 86_400,
        description: 'From a minute to two years. Default 90 days.',
      }),
    ),
    rateLimitPerMinute: Type.Optional(RateLimitPerMinute),
  },
  { title: 'ApiKeyInput', additionalProperties: false },
)

export const CreatedApiKeySchema = Type.Composite(
  [
    ApiKeySummarySchema,
    Type.Object({
      key: Type.String({
        description:
          'The key (`hjk_...`). Shown this once: only its hash is kept. Never put it in browser code.',
      }),
    }),
  ],
  { title: 'CreatedApiKey', additionalProperties: false },
)

export const ApiKeyListSchema = SinglePageSchema(ApiKeySummarySchema, 'ApiKeyList', 'A tenant has few keys')

export const ApiKeyParamsSchema = Type.Object(
  { keyId: Type.String({ pattern: idPattern('apiKey') }) },
  { additionalProperties: false },
)

export const OAuthAppInputSchema = Type.Object(
  {
    name: Name,
    scopes: Scopes,
    rateLimitPerMinute: Type.Optional(RateLimitPerMinute),
  },
  {
    title: 'OAuthAppInput',
    additionalProperties: false,
    description:
      'The client id is generated (`hjc_...`): client ids are unique across the whole server (RFC 6749 §2.2), so a ' +
      'tenant does not choose one. An operator can choose one with `hajri-cloud oauth-app create --client-id`.',
  },
)

export const CreatedOAuthAppSchema = Type.Composite(
  [
    OAuthAppSummarySchema,
    Type.Object({
      clientSecret: Type.String({
        description: 'The client secret (`hjs_...`). Shown this once: only its hash is kept.',
      }),
    }),
  ],
  { title: 'CreatedOAuthApp', additionalProperties: false },
)

export const OAuthAppListSchema = SinglePageSchema(
  OAuthAppSummarySchema,
  'OAuthAppList',
  'A tenant has few apps',
)

export const OAuthAppParamsSchema = Type.Object(
  { appId: Type.String({ pattern: idPattern('oauthApp') }) },
  { additionalProperties: false },
)

export const ClientSecretRotationInputSchema = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30 * 86_400,
        description: 'How long the secrets in use keep working beside the new one. Default 86400 (a day).',
      }),
    ),
  },
  { additionalProperties: false },
)

export const RotatedClientSecretSchema = Type.Object(
  {
    id: Type.String(),
    clientId: Type.String(),
    clientSecret: Type.String({ description: 'The new client secret. Shown this once.' }),
    previousSecretsExpireAt: Type.String({
      format: 'date-time',
      description: 'When the secrets in use before the rotation stop working.',
    }),
  },
  { title: 'RotatedClientSecret', additionalProperties: false },
)
