import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { SCOPES } from '../../../shared/scopes.js'

const AUTH_METHODS = ['client_secret_basic', 'client_secret_post']

const MetadataSchema = Type.Object(
  {
    issuer: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    grant_types_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    introspection_endpoint_auth_methods_supported: Type.Array(Type.String()),
    scopes_supported: Type.Array(Type.String()),
    service_documentation: Type.String(),
  },
  { title: 'AuthorizationServerMetadata', additionalProperties: false },
)

/** RFC 8414: what an OAuth client library needs to know to talk to us, at the well-known path. */
export const oauthMetadataRoute: FastifyPluginAsync<{
  issuer: (request: FastifyRequest) => string
  /** Whether the issuer is configured; if it comes from the request's Host, caches must not share it. */
  fixedIssuer: boolean
}> = async (app, { issuer, fixedIssuer }) => {
  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        tags: ['OAuth'],
        summary: 'Authorization server metadata (RFC 8414)',
        response: { 200: MetadataSchema },
      },
    },
    async (request, reply) => {
      const base = issuer(request)
      reply.header('cache-control', fixedIssuer ? 'public, max-age=3600' : 'no-cache')
      return {
        issuer: base,
        token_endpoint: `${base}/api/oauth/token`,
        revocation_endpoint: `${base}/api/oauth/revoke`,
        introspection_endpoint: `${base}/api/oauth/introspect`,
        grant_types_supported: ['client_credentials'],
        // Required by RFC 8414, yet no response type applies: client credentials uses none.
        response_types_supported: [],
        token_endpoint_auth_methods_supported: AUTH_METHODS,
        revocation_endpoint_auth_methods_supported: AUTH_METHODS,
        introspection_endpoint_auth_methods_supported: AUTH_METHODS,
        scopes_supported: [...SCOPES],
        service_documentation: `${base}/docs`,
      }
    },
  )
}
