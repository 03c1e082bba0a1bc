import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { WEBHOOK_EVENTS, WebhookEventCatalogSchema } from '../../../shared/webhook-events.js'

/** The catalog is the same for every tenant and holds nothing private: served without a credential. */
const CATALOG = {
  data: Object.entries(WEBHOOK_EVENTS).map(([type, event]) => ({
    type,
    description: event.description,
    schema: event.data,
  })),
}

/**
 * GET /api/public/v1/webhook-event-types: every event an endpoint can ask for
 * (docs/decisions/0051-public-event-catalog.md).
 */
export const webhookEventTypeRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/webhook-event-types',
    {
      config: { anonymous: true },
      schema: {
        tags: ['Webhooks'],
        summary: 'The webhook event catalog',
        description:
          'Each event’s type, what it means, and the JSON Schema of its `data`. No credential needed.',
        security: [],
        response: { 200: WebhookEventCatalogSchema },
      },
    },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=3600').send(CATALOG),
  )
}
