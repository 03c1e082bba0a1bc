import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type Static, type TSchema, Type } from '@sinclair/typebox'
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
import type { Actor } from '../../auth/actor.js'
import { declareRoute } from '../../http/declare-route.js'
import { readAbsentBodyAsEmpty } from '../../http/read-absent-body-as-empty.js'
import type { DeliveryService } from './delivery-service.js'
import type { EndpointService } from './endpoint-service.js'

const TAGS = ['Webhooks']

/** Administration of a tenant's webhook endpoints, under /api/console/v1. */
export const webhookEndpointRoutes: FastifyPluginAsyncTypebox<{
  endpoints: EndpointService
  deliveries: DeliveryService
}> = async (app, { endpoints, deliveries }) => {
  /** POST /webhooks/:endpointId/<action>: the administrator does something to one endpoint, audited. */
  const endpointAction = <R extends TSchema>(
    action: string,
    doc: { summary: string; description?: string; status?: 202 },
    response: R,
    act: (tenantId: string, endpointId: string, actor: Actor) => Promise<Static<R>>,
  ) =>
    declareRoute(app, {
      method: 'POST',
      url: `/webhooks/:endpointId/${action}`,
      config: { access: 'write' },
      tags: TAGS,
      ...doc,
      params: EndpointParamsSchema,
      response,
      handle: (request) => act(request.console.tenant.id, request.params.endpointId, request.console.actor),
    })

  declareRoute(app, {
    method: 'GET',
    url: '/webhooks',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List webhook endpoints',
    response: WebhookEndpointListSchema,
    handle: async (request) => ({ data: await endpoints.list(request.console.tenant.id), nextCursor: null }),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/webhooks',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Register a webhook endpoint',
    description: 'The signing secret is in the answer. It can be shown again later (an audited act).',
    body: WebhookEndpointInputSchema,
    status: 201,
    response: CreatedWebhookEndpointSchema,
    handle: async (request) => {
      const { endpoint, secret } = await endpoints.create(
        request.console.tenant.id,
        request.body,
        request.console.actor,
      )
      return { ...endpoint, secret }
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/webhooks/:endpointId',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'Get a webhook endpoint',
    params: EndpointParamsSchema,
    response: WebhookEndpointSchema,
    handle: (request) => endpoints.get(request.console.tenant.id, request.params.endpointId),
  })

  declareRoute(app, {
    method: 'PATCH',
    url: '/webhooks/:endpointId',
    config: { access: 'write' },
    tags: TAGS,
    summary: "Change a webhook endpoint's URL, events or description",
    params: EndpointParamsSchema,
    body: WebhookEndpointUpdateSchema,
    response: WebhookEndpointSchema,
    handle: (request) =>
      endpoints.update(
        request.console.tenant.id,
        request.params.endpointId,
        request.body,
        request.console.actor,
      ),
  })

  declareRoute(app, {
    method: 'DELETE',
    url: '/webhooks/:endpointId',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Delete a webhook endpoint',
    description: 'Its deliveries stay in the log; none is attempted again.',
    params: EndpointParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await endpoints.remove(request.console.tenant.id, request.params.endpointId, request.console.actor)
      return null
    },
  })

  endpointAction(
    'pause',
    {
      summary: 'Pause an endpoint',
      description: 'Deliveries are held, and sent in order when it is resumed.',
    },
    WebhookEndpointSchema,
    (tenantId, endpointId, actor) => endpoints.pause(tenantId, endpointId, actor),
  )

  endpointAction(
    'resume',
    {
      summary: 'Resume a paused or disabled endpoint',
      description: 'Held deliveries go out at once, oldest first.',
    },
    WebhookEndpointSchema,
    (tenantId, endpointId, actor) => endpoints.resume(tenantId, endpointId, actor),
  )

  endpointAction(
    'test',
    { summary: 'Send the test event to this endpoint', status: 202 },
    TestEventSentSchema,
    (tenantId, endpointId, actor) => endpoints.sendTest(tenantId, endpointId, actor),
  )

  declareRoute(app, {
    method: 'POST',
    url: '/webhooks/:endpointId/rotate-secret',
    config: { access: 'write' },
    // The body is optional: without one, the default grace period.
    preValidation: readAbsentBodyAsEmpty,
    tags: TAGS,
    summary: 'Rotate the signing secret',
    description:
      'The new secret signs from now on. Until `previousSecretsExpireAt` each delivery carries a ' +
      'signature by the old secret too, so receivers can switch without missing one.',
    params: EndpointParamsSchema,
    body: Type.Optional(SecretRotationInputSchema),
    response: RotatedWebhookSecretSchema,
    handle: (request) =>
      endpoints.rotateSecret(
        request.console.tenant.id,
        request.params.endpointId,
        request.console.actor,
        request.body?.graceSeconds,
      ),
  })

  endpointAction(
    'reveal-secret',
    { summary: 'Show the current signing secret', description: 'Recorded in the audit log.' },
    WebhookSecretSchema,
    (tenantId, endpointId, actor) => endpoints.revealSecret(tenantId, endpointId, actor),
  )

  declareRoute(app, {
    method: 'POST',
    url: '/webhooks/:endpointId/replay',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Replay failed deliveries',
    description:
      'Every failed or exhausted delivery to this endpoint created since `since` is attempted again now.',
    params: EndpointParamsSchema,
    body: ReplayInputSchema,
    status: 202,
    response: ReplayResultSchema,
    handle: (request) =>
      deliveries.replay(
        request.console.tenant.id,
        request.params.endpointId,
        request.body.since,
        request.console.actor,
      ),
  })
}
