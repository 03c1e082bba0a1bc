import { type Static, Type } from '@sinclair/typebox'

/** RFC 6749 §5.1 / RFC 6750: opaque bearer tokens, one hour. */
export const ACCESS_TOKEN_TTL_SECONDS = 3600

/**
 * Token, revocation and introspection requests, as the OAuth RFCs define them. Loose on purpose:
 * unknown parameters must be ignored (RFC 6749 §3.2), and a wrong one is answered with an OAuth
 * error, not a validation problem, so the routes check these themselves.
 */
const OAuthString = Type.String({ maxLength: 1024 })

/** Client authentication in the request body (RFC 6749 §2.3.1), beside HTTP Basic. */
const ClientAuthFields = {
  client_id: Type.Optional(OAuthString),
  client_secret: Type.Optional(OAuthString),
}

export const TokenRequestSchema = Type.Object(
  {
    grant_type: Type.Optional(OAuthString),
    scope: Type.Optional(OAuthString),
    ...ClientAuthFields,
  },
  { title: 'TokenRequest', description: 'RFC 6749 §4.4.2: grant_type=client_credentials, optional scope.' },
)

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    scope: Type.String(),
  },
  { title: 'TokenResponse', additionalProperties: false },
)

export type TokenResponse = Static<typeof TokenResponseSchema>

export const TokenOperationRequestSchema = Type.Object(
  {
    token: Type.Optional(OAuthString),
    token_type_hint: Type.Optional(OAuthString),
    ...ClientAuthFields,
  },
  { title: 'TokenOperationRequest', description: 'RFC 7009 §2.1 / RFC 7662 §2.1.' },
)

export const IntrospectionResponseSchema = Type.Object(
  {
    active: Type.Boolean(),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    token_type: Type.Optional(Type.String()),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    sub: Type.Optional(Type.String()),
    iss: Type.Optional(Type.String()),
  },
  { title: 'IntrospectionResponse', additionalProperties: false },
)

export type IntrospectionResponse = Static<typeof IntrospectionResponseSchema>

/** RFC 6749 §5.2, with RFC 9457 members beside (extra members are allowed in both). */
export const OAuthErrorSchema = Type.Object(
  {
    error: Type.String(),
    error_description: Type.Optional(Type.String()),
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    code: Type.String(),
    instance: Type.Optional(Type.String()),
  },
  { title: 'OAuthError' },
)

export type OAuthErrorBody = Static<typeof OAuthErrorSchema>
