import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../app-error.js'

/**
 * RFC 9110 §7.2 and RFC 3986 §3.2.2: a Host is a registered name (letters, digits, `-`, `.`), an
 * IPv4 address or a bracketed IPv6 address, with an optional port. Nothing else reaches the app:
 * where no public URL is configured, the OAuth metadata and introspection build the issuer from
 * the Host, and a Host of `a"b<script>` came back in them.
 */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

/** How many Host fields the request really had: Node keeps the first and drops the others. */
function hostFields(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === 'host') count++
  return count
}

/**
 * RFC 9112 §3.2: a server must answer 400 to a request with more than one Host field (or one that
 * is not valid); two of them let a proxy and the app disagree on which site was asked for. With a
 * public URL configured the app never reads the Host for anything it sends back, but a request with
 * two is still refused.
 */
const hostHeaderPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', async (request) => {
    if (hostFields(request.raw.rawHeaders) > 1) {
      throw new AppError('invalid_host', 'The request has more than one Host header.')
    }
    // The Host, and the one a trusted proxy forwards (X-Forwarded-Host), which `request.host` is.
    for (const host of [request.headers.host, request.host]) {
      // An empty Host (RFC 9112 §3.2 allows it only for a target without an authority, which no
      // route here is) would make an issuer of `http://`.
      if (host !== undefined && !HOST.test(host)) {
        throw new AppError(
          'invalid_host',
          'The Host header must be a host name or address, with an optional port.',
        )
      }
    }
  })
}

export default fp(hostHeaderPlugin, { name: 'hajri-host-header' })
