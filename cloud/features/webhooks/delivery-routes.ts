import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  DeliveryListQuerySchema,
  DeliveryPageSchema,
  DeliveryParamsSchema,
  WebhookDeliveryDetailSchema,
  WebhookDeliverySchema,
} from '../../../shared/webhooks.js'
import type { DeliveryService } from './delivery-service.js'

const TAGS = ['Webhook deliveries']

/** The delivery log, under /api/console/v1. */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox<{ deliveries: DeliveryService }> = async (
  app,
  { deliveries },
) => {
  app.get(
    '/webhook-deliveries',
    {
      config: { access: 'read' },
      schema: {
        tags: TAGS,
        summary: 'List deliveries, newest first',
        querystring: DeliveryListQuerySchema,
        response: { 200: DeliveryPageSchema },
      },
    },
    async (request) => deliveries.list(request.console.tenant.id, request.query),
  )

  app.get(
    '/webhook-deliveries/:deliveryId',
    {
      config: { access: 'read' },
      schema: {
        tags: TAGS,
        summary: 'Get a delivery, its body and every attempt',
        params: DeliveryParamsSchema,
        response: { 200: WebhookDeliveryDetailSchema },
      },
    },
    async (request) => deliveries.show(request.console.tenant.id, request.params.deliveryId),
  )

  app.post(
    '/webhook-deliveries/:deliveryId/retry',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Retry a failed or exhausted delivery now',
        description: 'The attempt is logged as manual, and the retry in the audit log with who asked.',
        params: DeliveryParamsSchema,
        response: { 202: WebhookDeliverySchema },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await deliveries.retry(request.console.tenant.id, request.params.deliveryId, request.console.actor),
        ),
  )
}
