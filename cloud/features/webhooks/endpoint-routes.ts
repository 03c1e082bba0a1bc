import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  CreatedWebhookEndpointSchema,
  EndpointParamsSchema,
  ReplayInputSchema,
  ReplayResultSchema,
  RotatedWebhookSecretSchema,
  SecretRotationInputSchema,
  TestEventSentSchema,
  WebhookEndpointInputSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  WebhookEndpointUpdateSchema,
  WebhookSecretSchema,
} from '../../../shared/webhooks.js'
import type { DeliveryService } from './delivery-service.js'
import type { EndpointService } from './endpoint-service.js'

const TAGS = ['Webhooks']

/** Administration of a tenant's webhook endpoints, under /api/console/v1. */
export const webhookEndpointRoutes: FastifyPluginAsyncTypebox<{
  endpoints: EndpointService
  deliveries: DeliveryService
}> = async (app, { endpoints, deliveries }) => {
  app.get(
    '/webhooks',
    {
      config: { access: 'read' },
      schema: { tags: TAGS, summary: 'List webhook endpoints', response: { 200: WebhookEndpointListSchema } },
    },
    async (request) => ({ data: await endpoints.list(request.console.tenant.id), nextCursor: null }),
  )

  app.post(
    '/webhooks',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Register a webhook endpoint',
        description: 'The signing secret is in the answer. It can be shown again later (an audited act).',
        body: WebhookEndpointInputSchema,
        response: { 201: CreatedWebhookEndpointSchema },
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await endpoints.create(
        request.console.tenant.id,
        request.body,
        request.console.actor,
      )
      return reply.code(201).send({ ...endpoint, secret })
    },
  )

  app.get(
    '/webhooks/:endpointId',
    {
      config: { access: 'read' },
      schema: {
        tags: TAGS,
        summary: 'Get a webhook endpoint',
        params: EndpointParamsSchema,
        response: { 200: WebhookEndpointSchema },
      },
    },
    async (request) => endpoints.get(request.console.tenant.id, request.params.endpointId),
  )

  app.patch(
    '/webhooks/:endpointId',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: "Change a webhook endpoint's URL, events or description",
        params: EndpointParamsSchema,
        body: WebhookEndpointUpdateSchema,
        response: { 200: WebhookEndpointSchema },
      },
    },
    async (request) =>
      endpoints.update(
        request.console.tenant.id,
        request.params.endpointId,
        request.body,
        request.console.actor,
      ),
  )

  app.delete(
    '/webhooks/:endpointId',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook endpoint',
        description: 'Its deliveries stay in the log; none is attempted again.',
        params: EndpointParamsSchema,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await endpoints.remove(request.console.tenant.id, request.params.endpointId, request.console.actor)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/webhooks/:endpointId/pause',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Pause an endpoint',
        description: 'Deliveries are held, and sent in order when it is resumed.',
        params: EndpointParamsSchema,
        response: { 200: WebhookEndpointSchema },
      },
    },
    async (request) =>
      endpoints.pause(request.console.tenant.id, request.params.endpointId, request.console.actor),
  )

  app.post(
    '/webhooks/:endpointId/resume',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Resume a paused or disabled endpoint',
        description: 'Held deliveries go out at once, oldest first.',
        params: EndpointParamsSchema,
        response: { 200: WebhookEndpointSchema },
      },
    },
    async (request) =>
      endpoints.resume(request.console.tenant.id, request.params.endpointId, request.console.actor),
  )

  app.post(
    '/webhooks/:endpointId/test',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Send the test event to this endpoint',
        params: EndpointParamsSchema,
        response: { 202: TestEventSentSchema },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await endpoints.sendTest(
            request.console.tenant.id,
            request.params.endpointId,
            request.console.actor,
          ),
        ),
  )

  app.post(
    '/webhooks/:endpointId/rotate-secret',
    {
      config: { access: 'write' },
      // The body is optional, but Fastify validates an absent one as `undefined`, which no object
      // schema accepts: an absent body is read as an empty one (a default grace period).
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        tags: TAGS,
        summary: 'Rotate the signing secret',
        description:
          'The new secret signs from now on. Until `previousSecretsExpireAt` each delivery carries a ' +
          'signature by the old secret too, so receivers can switch without missing one.',
        params: EndpointParamsSchema,
        body: Type.Optional(SecretRotationInputSchema),
        response: { 200: RotatedWebhookSecretSchema },
      },
    },
    async (request) =>
      endpoints.rotateSecret(
        request.console.tenant.id,
        request.params.endpointId,
        request.console.actor,
        request.body?.graceSeconds,
      ),
  )

  app.post(
    '/webhooks/:endpointId/reveal-secret',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Show the current signing secret',
        description: 'Recorded in the audit log.',
        params: EndpointParamsSchema,
        response: { 200: WebhookSecretSchema },
      },
    },
    async (request) =>
      endpoints.revealSecret(request.console.tenant.id, request.params.endpointId, request.console.actor),
  )

  app.post(
    '/webhooks/:endpointId/replay',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Replay failed deliveries',
        description:
          'Every failed or exhausted delivery to this endpoint created since `since` is attempted again now.',
        params: EndpointParamsSchema,
        body: ReplayInputSchema,
        response: { 202: ReplayResultSchema },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await deliveries.replay(
            request.console.tenant.id,
            request.params.endpointId,
            request.body.since,
            request.console.actor,
          ),
        ),
  )
}
