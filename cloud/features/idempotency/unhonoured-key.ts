import type { preValidationHookHandler, RouteOptions } from 'fastify'
import { AppError } from '../../app-error.js'

// The methods a retry may repeat the effect of (RFC 9110 §9.2.2: neither POST nor PATCH is
// idempotent); PUT and DELETE are idempotent already and need no key.
const NOT_IDEMPOTENT = new Set(['POST', 'PATCH'])

/**
 * A client that sends `Idempotency-Key` believes its retries are safe. The IETF draft
 * (draft-ietf-httpapi-idempotency-key-header) leaves to the server which operations honour the
 * key, and the server must say which; a route that does not honour it and ignored it silently
 * (three retries of "create an API key" made three keys) broke that belief without a word. So
 * the routes that honour it declare it among their headers (the punch routes), and every other
 * POST or PATCH refuses a request that carries it, before it changes anything.
 *
 * The console's creating routes answer with a secret shown once (an API key, a client secret, a
 * webhook signing secret), kept only as a hash or sealed: honouring the key there would mean
 * storing that secret, readable, for the key's 24 hours.
 */
const refuseKey: preValidationHookHandler = async (request) => {
  if (request.headers['idempotency-key'] === undefined) return
  throw new AppError(
    'idempotency_key_not_supported',
    'This request does not honour Idempotency-Key, so a retry would not be safe; nothing was done. Send it without the header (see docs/integrators/api.md#punches for where Idempotency-Key applies).',
    {
      errors: [{ in: 'header', pointer: '#/idempotency-key', message: 'is not honoured by this request' }],
    },
  )
}

/** Whether a route declares the Idempotency-Key header, and so honours it. */
function declaresKey(route: RouteOptions): boolean {
  const headers = route.schema?.headers as { properties?: Record<string, unknown> } | undefined
  return headers?.properties?.['idempotency-key'] !== undefined
}

/** For `app.addHook('onRoute', ...)`, before any route is added. */
export function refuseUnhonouredIdempotencyKeys(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (!methods.some((m) => NOT_IDEMPOTENT.has(m)) || declaresKey(route)) return
  const existing = route.preValidation
  route.preValidation = [
    ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
    refuseKey,
  ] as preValidationHookHandler[]
}
