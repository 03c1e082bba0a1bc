import type { FastifyRequest } from 'fastify'
import { OAuthError } from './oauth-error.js'

export interface ClientCredentials {
  clientId: string
  clientSecret: string
  method: 'client_secret_basic' | 'client_secret_post'
}

// RFC 6749 §2.3.1 requires HTTP Basic support; the challenge names our realm.
const BASIC_CHALLENGE = 'Basic realm="hajri"'

/**
 * application/x-www-form-urlencoded decoding (RFC 6749 Appendix B): `+` is a space, `%XX` a byte
 * of UTF-8. Returns undefined for a malformed escape.
 */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

/**
 * RFC 6749 §5.2: a client that failed to authenticate gets a 401. Every 401 names a scheme
 * (RFC 9110 §15.5.2), and Basic is the one RFC 6749 §2.3.1 requires, so it always carries that
 * challenge, whichever method the client tried.
 */
export function invalidClient(description: string): OAuthError {
  return new OAuthError('invalid_client', description, 401, { 'www-authenticate': BASIC_CHALLENGE })
}

/**
 * The client's credentials, from `Authorization: Basic` (client_secret_basic) or the body
 * (client_secret_post). RFC 6749 §2.3.1: with Basic, the id and the secret are each form-encoded
 * before being joined by ":" and base64-encoded, so each half is form-decoded here; §2.3: a client
 * must not use more than one method at once.
 */
export function clientCredentials(request: FastifyRequest): ClientCredentials {
  const body = (request.body ?? {}) as Record<string, unknown>
  const header = request.headers.authorization
  const inBody = body.client_id !== undefined || body.client_secret !== undefined
  if (header !== undefined) {
    const m = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header)
    if (!m?.[1])
      throw invalidClient('The Authorization header must be Basic base64(client_id:client_secret).')
    const decoded = Buffer.from(m[1], 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    const clientId = colon < 0 ? undefined : formDecode(decoded.slice(0, colon))
    const clientSecret = colon < 0 ? undefined : formDecode(decoded.slice(colon + 1))
    if (!clientId || clientSecret === undefined) {
      throw invalidClient('The Basic credentials must be form-encoded client_id:client_secret.')
    }
    // A client may name itself in the body as well (RFC 6749 §3.2.1), but not authenticate twice.
    if (body.client_secret !== undefined || (body.client_id !== undefined && body.client_id !== clientId)) {
      throw new OAuthError(
        'invalid_request',
        'Authenticate with the Authorization header or the body, not both.',
      )
    }
    return { clientId, clientSecret, method: 'client_secret_basic' }
  }
  if (typeof body.client_id === 'string' && typeof body.client_secret === 'string' && body.client_id !== '') {
    return { clientId: body.client_id, clientSecret: body.client_secret, method: 'client_secret_post' }
  }
  // RFC 6749 §5.2: a client that sent no usable credentials is invalid_client, not invalid_request.
  if (inBody) throw invalidClient('client_id and client_secret must both be given, once each, as text.')
  throw invalidClient('Client authentication is required (HTTP Basic, or client_id and client_secret).')
}
