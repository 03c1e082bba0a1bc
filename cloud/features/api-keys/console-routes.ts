import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  ApiKeyInputSchema,
  ApiKeyListSchema,
  ApiKeyParamsSchema,
  CreatedApiKeySchema,
} from '../../../shared/console-credentials.js'
import { ApiKeySummarySchema } from '../../../shared/credentials.js'
import { declareRoute } from '../../http/declare-route.js'
import type { ApiKeyService } from './service.js'

const TAGS = ['API keys']

/** A tenant's API keys, administered under /api/console/v1, as the CLI does. */
export const apiKeyConsoleRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeyService }> = async (
  app,
  { apiKeys },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/api-keys',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List API keys',
    description: 'Every key, revoked and expired ones too, with its last use (to the minute).',
    response: ApiKeyListSchema,
    handle: async (request) => ({ data: await apiKeys.list(request.console.tenant.id), nextCursor: null }),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/api-keys',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Create an API key',
    description:
      'The key is in this answer and nowhere else, ever: only its SHA-256 is kept. It is for servers; ' +
      'a request with it from a browser (an Origin header) is refused.',
    body: ApiKeyInputSchema,
    status: 201,
    response: CreatedApiKeySchema,
    handle: async (request) => {
      const tenantId = request.console.tenant.id
      const { id, key } = await apiKeys.create(tenantId, request.body, request.console.actor)
      // The CLI prints what create answers; the console shows the key as its list will.
      return { ...(await apiKeys.get(tenantId, id)), key }
    },
  })

  declareRoute(app, {
    method: 'POST',
    url: '/api-keys/:keyId/revoke',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Revoke an API key',
    description: 'It is refused from the next request on. Revoking a revoked key changes nothing.',
    params: ApiKeyParamsSchema,
    response: ApiKeySummarySchema,
    handle: (request) =>
      apiKeys.revoke(request.console.tenant.id, request.params.keyId, request.console.actor),
  })
}
