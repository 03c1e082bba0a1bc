import { type FastifyPluginAsyncTypebox, type Static, Type } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  PunchBatchInputSchema,
  PunchBatchResponseSchema,
  PunchInputSchema,
  PunchListQuerySchema,
  PunchPageSchema,
  PunchParamsSchema,
  PunchSchema,
} from '../../../shared/punch.js'
import { AppError } from '../../app-error.js'
import { liveCredentialCheck } from '../../auth/auth-context.js'
import { publicActor } from '../../auth/public-actor.js'
import { insufficientScope } from '../../http/challenge-error.js'
import { declareRoute } from '../../http/declare-route.js'
import { readForCachedCaller } from '../../http/read-for-cached-caller.js'
import type { CorrectionService } from '../attendance/correction-service.js'
import type { IdempotencyKeyUse } from '../idempotency/service.js'
import type { PunchService } from './service.js'

const IdempotencyHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 257,
      description:
        'Makes a retry safe: the first response to a key is stored for 24 hours and replayed ' +
        '(with Idempotent-Replayed: true); the same key with a different body is a 422.',
    }),
  ),
})

/**
 * The key as the IETF draft writes it (a structured-field string, `"abc"`) or bare, as most
 * clients send it. Printable ASCII only, at most 255 characters. With it, the credential whose
 * allowance of stored responses it counts against.
 */
function idempotencyKey(header: string | undefined, credential: string): IdempotencyKeyUse | undefined {
  if (header === undefined) return undefined
  const key = /^"(.*)"$/.exec(header)?.[1] ?? header
  if (!/^[\x20-\x7E]{1,255}$/.test(key) || key.trim() === '') {
    throw new AppError(
      'invalid_idempotency_key',
      'Idempotency-Key must be 1 to 255 printable ASCII characters.',
      {
        errors: [
          {
            in: 'header',
            pointer: '#/idempotency-key',
            message: 'must be 1 to 255 printable ASCII characters',
          },
        ],
      },
    )
  }
  return { key, credential }
}

/**
 * Runs a write under the request's Idempotency-Key, if it has one, and says on the reply whether its
 * answer is a replay (docs/development/architecture.md#idempotency).
 */
async function idempotently<T>(
  request: FastifyRequest<{ Headers: Static<typeof IdempotencyHeadersSchema> }>,
  reply: FastifyReply,
  write: (key: IdempotencyKeyUse | undefined) => Promise<{ body: T; replayed: boolean }>,
): Promise<T> {
  const key = idempotencyKey(request.headers['idempotency-key'], request.auth.credential.rateLimitKey)
  const { body, replayed } = await write(key)
  if (replayed) reply.header('idempotent-replayed', 'true')
  return body
}

export const punchRoutes: FastifyPluginAsyncTypebox<{
  service: PunchService
  corrections: CorrectionService
}> = async (app, { service, corrections }) => {
  declareRoute(app, {
    method: 'POST',
    url: '/attendance/punches',
    config: { scope: 'attendance:write', liveCredentialCheckedByWrite: true },
    tags: ['Attendance'],
    summary: 'Record one IN or OUT punch, or add a manual one (a correction)',
    description:
      'Stores the punch in the raw punch log. A punch whose externalId is already stored, or a retry with ' +
      'the same Idempotency-Key, returns the original punch with `Idempotent-Replayed: true`. With `source: manual` ' +
      'and a `reason` it is a correction: it needs attendance:admin too, and is audited.',
    headers: IdempotencyHeadersSchema,
    body: PunchInputSchema,
    status: 201,
    response: PunchSchema,
    handle: async (request, reply) => {
      const body = await idempotently(request, reply, async (key) => {
        if (request.body.source !== 'manual') {
          // The credential may come from the cache: the insert checks it, or the service has it
          // verified (docs/decisions/0091-credential-cache-checked-by-the-write.md).
          const { auth } = request
          const credential = liveCredentialCheck(auth)
          const verify = async () => (await request.verifiedAuth()).tenant
          return service.record(auth.tenant, request.body, key, credential && { credential, verify })
        }
        await request.verifiedAuth()
        // A manual punch is a correction (docs/decisions/0085-attendance-days-are-a-pure-function.md):
        // it needs the scope to correct attendance, is audited, and is replayed by its externalId.
        if (!request.auth.credential.scopes.includes('attendance:admin'))
          throw insufficientScope(
            'attendance:admin',
            'A manual punch (source manual) needs the scope attendance:admin.',
          )
        return corrections.addManualPunch(request.auth.tenant, request.body, publicActor(request), key)
      })
      reply.header('location', `${request.routeOptions.url}/${body.id}`)
      return body
    },
  })

  declareRoute(app, {
    method: 'POST',
    url: '/attendance/punches/batch',
    config: { scope: 'attendance:write' },
    tags: ['Attendance'],
    summary: 'Record up to 500 punches',
    description:
      'Each punch is checked and stored on its own and gets a result: `created`, `duplicate` (its ' +
      'externalId is already stored; the stored punch is returned) or `rejected` (with its problem). ' +
      'One bad punch never fails the others.',
    headers: IdempotencyHeadersSchema,
    body: PunchBatchInputSchema,
    response: PunchBatchResponseSchema,
    handle: (request, reply) =>
      idempotently(request, reply, (key) =>
        service.recordBatch(request.auth.tenant, request.body.punches, key),
      ),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/punches',
    // The credential may come from the cache: the page's statement checks it, with the tenant's
    // time zone the punches are shown in.
    config: { scope: 'attendance:read', liveCredentialCheckedByRead: true },
    tags: ['Attendance'],
    summary: 'Read the raw punch log',
    description: 'Every accepted punch, oldest punchedAt first, filtered by employee and time.',
    querystring: PunchListQuerySchema,
    response: PunchPageSchema,
    handle: (request) =>
      readForCachedCaller(
        request,
        (caller) => service.listForCachedCaller(request.auth.tenant, request.query, caller),
        () => service.list(request.auth.tenant, request.query),
      ),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/punches/:punchId',
    config: { scope: 'attendance:read' },
    tags: ['Attendance'],
    summary: 'Get one punch',
    params: PunchParamsSchema,
    response: PunchSchema,
    handle: (request) => service.get(request.auth.tenant, request.params.punchId),
  })
}
