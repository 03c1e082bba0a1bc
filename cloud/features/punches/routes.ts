import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
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

function markReplayed(reply: FastifyReply, replayed: boolean): void {
  if (replayed) reply.header('idempotent-replayed', 'true')
}

export const punchRoutes: FastifyPluginAsyncTypebox<{ service: PunchService }> = async (app, { service }) => {
  app.post(
    '/attendance/punches',
    {
      config: { scope: 'attendance:write' },
      schema: {
        tags: ['Attendance'],
        summary: 'Record one IN or OUT punch',
        description:
          'Stores the punch in the raw punch log. A punch whose externalId is already stored, or a retry with ' +
          'the same Idempotency-Key, returns the original punch with `Idempotent-Replayed: true`.',
        headers: IdempotencyHeadersSchema,
        body: PunchInputSchema,
        response: { 201: PunchSchema },
      },
    },
    async (request, reply) => {
      const key = idempotencyKey(request.headers['idempotency-key'], request.auth.credential.rateLimitKey)
      const { body, replayed } = await service.record(request.auth.tenant, request.body, key)
      markReplayed(reply, replayed)
      return reply.code(201).header('location', `${request.routeOptions.url}/${body.id}`).send(body)
    },
  )

  app.post(
    '/attendance/punches/batch',
    {
      config: { scope: 'attendance:write' },
      schema: {
        tags: ['Attendance'],
        summary: 'Record up to 500 punches',
        description:
          'Each punch is checked and stored on its own and gets a result: `created`, `duplicate` (its ' +
          'externalId is already stored; the stored punch is returned) or `rejected` (with its problem). ' +
          'One bad punch never fails the others.',
        headers: IdempotencyHeadersSchema,
        body: PunchBatchInputSchema,
        response: { 200: PunchBatchResponseSchema },
      },
    },
    async (request, reply) => {
      const key = idempotencyKey(request.headers['idempotency-key'], request.auth.credential.rateLimitKey)
      const { body, replayed } = await service.recordBatch(request.auth.tenant, request.body.punches, key)
      markReplayed(reply, replayed)
      return body
    },
  )

  app.get(
    '/attendance/punches',
    {
      config: { scope: 'attendance:read' },
      schema: {
        tags: ['Attendance'],
        summary: 'Read the raw punch log',
        description: 'Every accepted punch, oldest punchedAt first, filtered by employee and time.',
        querystring: PunchListQuerySchema,
        response: { 200: PunchPageSchema },
      },
    },
    async (request) => service.list(request.auth.tenant, request.query),
  )

  app.get(
    '/attendance/punches/:punchId',
    {
      config: { scope: 'attendance:read' },
      schema: {
        tags: ['Attendance'],
        summary: 'Get one punch',
        params: PunchParamsSchema,
        response: { 200: PunchSchema },
      },
    },
    async (request) => service.get(request.auth.tenant, request.params.punchId),
  )
}
