import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { oauthMetadataRoute } from '../features/oauth/metadata-route.js'
import { oauthRoutes } from '../features/oauth/routes.js'
import { rateLimitSettings } from '../http/rate-limit.js'
import browserOriginPlugin from '../plugins/browser-origin.js'
import type { Services } from '../services.js'

export interface OAuthApiOptions {
  services: Pick<Services, 'oauthApps' | 'tokens'>
  /** HAJRI_PUBLIC_URL: the issuer (RFC 8414 §2); without it, the request's own scheme and host. */
  publicUrl: string | undefined
  /** Shares the counters between instances. */
  redis: Redis | undefined
  /** Requests a minute to the OAuth endpoints from one address (HAJRI_OAUTH_RATE_LIMIT_PER_IP). */
  perIpPerMinute: number
  /** Failed client authentications a minute per client id and address (HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT). */
  perClientPerMinute: number
}

/**
 * The OAuth 2.0 authorization server (docs/decisions/0016-oauth-client-credentials.md): its metadata at
 * the well-known path (RFC 8414), and the token, revocation and introspection endpoints under
 * /api/oauth, never from a browser, limited per address and per client.
 */
export const oauthApi: FastifyPluginAsync<OAuthApiOptions> = async (app, options) => {
  const { services, publicUrl } = options
  const issuer = (request: FastifyRequest) =>
    publicUrl ?? `${request.protocol}://${request.host}`.replace(/\/$/, '')
  await app.register(oauthMetadataRoute, { issuer, fixedIssuer: publicUrl !== undefined })
  await app.register(
    async (oauth) => {
      await oauth.register(browserOriginPlugin)
      await oauth.register(oauthRoutes, {
        apps: services.oauthApps,
        tokens: services.tokens,
        issuer,
        rateLimit: rateLimitSettings('hajri-rl-oauth:', options.redis),
        perIpPerMinute: options.perIpPerMinute,
        perClientPerMinute: options.perClientPerMinute,
      })
    },
    { prefix: '/api/oauth' },
  )
}
