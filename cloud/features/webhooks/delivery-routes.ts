import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  DeliveryListQuerySchema,
  DeliveryPageSchema,
  DeliveryParamsSchema,
  WebhookDeliveryDetailSchema,
  WebhookDeliverySchema,
} from '../../../shared/webhooks.js'
import { declareRoute } from '../../http/declare-route.js'
import type { DeliveryService } from './delivery-service.js'

const TAGS = ['Webhook deliveries']

/** The delivery log, under /api/console/v1. */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox<{ deliveries: DeliveryService }> = async (
  app,
  { deliveries },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/webhook-deliveries',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List deliveries, newest first',
    querystring: DeliveryListQuerySchema,
    response: DeliveryPageSchema,
    handle: (request) => deliveries.list(request.console.tenant.id, request.query),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/webhook-deliveries/:deliveryId',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'Get a delivery, its body and every attempt',
    params: DeliveryParamsSchema,
    response: WebhookDeliveryDetailSchema,
    handle: (request) => deliveries.show(request.console.tenant.id, request.params.deliveryId),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/webhook-deliveries/:deliveryId/retry',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Retry a failed or exhausted delivery now',
    description: 'The attempt is logged as manual, and the retry in the audit log with who asked.',
    params: DeliveryParamsSchema,
    status: 202,
    response: WebhookDeliverySchema,
    handle: (request) =>
      deliveries.retry(request.console.tenant.id, request.params.deliveryId, request.console.actor),
  })
}
