import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ConsoleOrigin } from '../http/session-guard.js'

/**
 * An API answer is data, never a page: it may run nothing, load nothing and be framed by no one
 * (OWASP REST Security Cheat Sheet, "Security headers").
 */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'"
/** /docs is Swagger UI's page, with its own scripts and styles: only framing is refused there. */
export const DOCS_CSP = "frame-ancestors 'none'"
/** A year, as the Caddyfile sends it (deploy/Caddyfile); no includeSubDomains: that is the domain owner's call. */
export const HSTS = 'max-age=31536000'

const isDocs = (url: string) => url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?')

/**
 * The headers every answer carries, whatever produced it: a route, an error, the not-found handler
 * or the router itself (errors.ts calls this for the answers it sends before any hook). Headers a
 * route chose are kept: the console's files set a stricter CSP and their own caching, the event
 * catalog and the OAuth metadata may be cached.
 */
export function applySecurityHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  origin: ConsoleOrigin,
): void {
  reply.header('x-content-type-options', 'nosniff')
  reply.header('referrer-policy', 'no-referrer')
  reply.header('x-frame-options', 'DENY')
  if (!reply.hasHeader('content-security-policy')) {
    reply.header('content-security-policy', isDocs(request.url) ? DOCS_CSP : API_CSP)
  }
  // Answers carry tenants' data and, at times, secrets shown once (an API key, a client secret, a
  // CSRF token): no cache, shared or private, may keep one (RFC 9111 §5.2.2.5).
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
  // RFC 6797 §7.2: only over https (a browser ignores it over http), as the client reached us:
  // directly, through a proxy we trust (X-Forwarded-Proto), or at an https HAJRI_PUBLIC_URL.
  if (origin.isHttps(request)) reply.header('strict-transport-security', HSTS)
}

/**
 * Security headers for the whole app (OWASP API8:2023 Security Misconfiguration): a small
 * onSend hook rather than @fastify/helmet, which is not a dependency: the API needs only the few
 * headers above, and the console's stricter page headers stay in static-console.ts. No CORS header
 * is ever set (docs/decisions/0006-no-api-keys-in-browsers.md): the public API is for servers, and the
 * console is same-origin.
 */
const securityHeadersPlugin: FastifyPluginAsync<{ origin: ConsoleOrigin }> = async (app, { origin }) => {
  app.addHook('onSend', async (request, reply, payload) => {
    applySecurityHeaders(request, reply, origin)
    return payload
  })
}

export default fp(securityHeadersPlugin, { name: 'hajri-security-headers' })
