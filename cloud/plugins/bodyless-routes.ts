import type { preValidationHookHandler, RouteOptions } from 'fastify'
import { AppError } from '../app-error.js'

const TAKES_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * OWASP API3:2023 (mass assignment): a route that declares no body takes none. Fastify
 * would hand such a route any JSON and the route would ignore it, so `POST .../revoke` with
 * `{"tenantId": ...}` answered 200 as if the field meant something. Now only no body, `null` or
 * `{}` (what HTTP clients send for an empty POST) get through; anything else is a 400
 * validation_failed naming each field, like a route whose schema says additionalProperties: false.
 */
const refuseBody: preValidationHookHandler = async (request) => {
  const body = request.body
  if (body === undefined || body === null || body === '') return
  if (typeof body === 'object' && !Array.isArray(body)) {
    const fields = Object.keys(body)
    if (fields.length === 0) return
    throw new AppError('validation_failed', 'This request takes no body; see errors.', {
      errors: fields.map((field) => ({
        in: 'body' as const,
        pointer: `#/${field.replaceAll('~', '~0').replaceAll('/', '~1')}`,
        message: 'is not a known field',
      })),
    })
  }
  throw new AppError('validation_failed', 'This request takes no body; see errors.', {
    errors: [{ in: 'body', pointer: '#', message: 'must be empty: this request takes no body' }],
  })
}

/** For `app.addHook('onRoute', ...)`, before any route is added: adds the check to each route without a body schema. */
export function refuseUndeclaredBodies(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method]
  if (!methods.some((m) => TAKES_BODY.has(m)) || route.schema?.body !== undefined) return
  const existing = route.preValidation
  route.preValidation = [
    ...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]),
    refuseBody,
  ] as preValidationHookHandler[]
}
