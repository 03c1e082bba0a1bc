import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  ClientSecretRotationInputSchema,
  CreatedOAuthAppSchema,
  OAuthAppInputSchema,
  OAuthAppListSchema,
  OAuthAppParamsSchema,
  RotatedClientSecretSchema,
} from '../../../shared/console-credentials.js'
import { OAuthAppSummarySchema } from '../../../shared/credentials.js'
import { declareRoute } from '../../http/declare-route.js'
import { readAbsentBodyAsEmpty } from '../../http/read-absent-body-as-empty.js'
import type { OAuthAppService } from './app-service.js'

const TAGS = ['OAuth apps']

/**
 * A tenant's OAuth apps, administered under /api/console/v1, as the CLI does.
 * An app's history is the audit log filtered by its id (GET /audit?targetId=app_...).
 */
export const oauthAppConsoleRoutes: FastifyPluginAsyncTypebox<{ apps: OAuthAppService }> = async (
  app,
  { apps },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/oauth-apps',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List OAuth apps',
    description: 'Every app, revoked ones too, with the secrets that still work (their prefixes only).',
    response: OAuthAppListSchema,
    handle: async (request) => ({ data: await apps.list(request.console.tenant.id), nextCursor: null }),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/oauth-apps',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Create an OAuth app (client credentials)',
    description:
      'The client secret is in this answer and nowhere else, ever: only its SHA-256 is kept. ' +
      'The app gets tokens from POST /api/oauth/token. The client id is generated (`hjc_...`): ' +
      'client ids are unique across the server, so a tenant cannot choose one.',
    body: OAuthAppInputSchema,
    status: 201,
    response: CreatedOAuthAppSchema,
    handle: async (request) => {
      const tenantId = request.console.tenant.id
      // The body has no client id (OAuthAppInputSchema): a tenant's app always gets a generated one.
      const { name, scopes, rateLimitPerMinute } = request.body
      const input = { name, scopes, ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }) }
      const { id, clientSecret } = await apps.create(tenantId, input, request.console.actor)
      // The CLI prints what create answers; the console shows the app as its list will.
      return { ...(await apps.get(tenantId, id)), clientSecret }
    },
  })

  declareRoute(app, {
    method: 'POST',
    url: '/oauth-apps/:appId/rotate-secret',
    config: { access: 'write' },
    preValidation: readAbsentBodyAsEmpty,
    tags: TAGS,
    summary: 'Rotate the client secret',
    description:
      'A new secret works at once; the ones in use keep working until `previousSecretsExpireAt` ' +
      '(`graceSeconds` from now, a day by default; 0 cuts them off now). A revoked app cannot be rotated.',
    params: OAuthAppParamsSchema,
    body: Type.Optional(ClientSecretRotationInputSchema),
    response: RotatedClientSecretSchema,
    handle: (request) =>
      apps.rotateSecret(
        request.console.tenant.id,
        request.params.appId,
        request.console.actor,
        request.body?.graceSeconds,
      ),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/oauth-apps/:appId/revoke',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Revoke an OAuth app',
    description:
      'Its secrets and every token issued to it are refused from the next request on. Revoking a ' +
      'revoked app changes nothing.',
    params: OAuthAppParamsSchema,
    response: OAuthAppSummarySchema,
    handle: (request) => apps.revoke(request.console.tenant.id, request.params.appId, request.console.actor),
  })
}
