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
  app.get(
    '/oauth-apps',
    {
      config: { access: 'read' },
      schema: {
        tags: TAGS,
        summary: 'List OAuth apps',
        description: 'Every app, revoked ones too, with the secrets that still work (their prefixes only).',
        response: { 200: OAuthAppListSchema },
      },
    },
    async (request) => ({ data: await apps.list(request.console.tenant.id), nextCursor: null }),
  )

  app.post(
    '/oauth-apps',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Create an OAuth app (client credentials)',
        description:
          'The client secret is in this answer and nowhere else, ever: only its SHA-256 is kept. ' +
          'The app gets tokens from POST /api/oauth/token. The client id is generated (`hjc_...`): ' +
          'client ids are unique across the server, so a tenant cannot choose one.',
        body: OAuthAppInputSchema,
        response: { 201: CreatedOAuthAppSchema },
      },
    },
    async (request, reply) => {
      const tenantId = request.console.tenant.id
      // The body has no client id (OAuthAppInputSchema): a tenant's app always gets a generated one.
      const { name, scopes, rateLimitPerMinute } = request.body
      const input = { name, scopes, ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }) }
      const { id, clientSecret } = await apps.create(tenantId, input, request.console.actor)
      // The CLI prints what create answers; the console shows the app as its list will.
      return reply.code(201).send({ ...(await apps.get(tenantId, id)), clientSecret })
    },
  )

  app.post(
    '/oauth-apps/:appId/rotate-secret',
    {
      config: { access: 'write' },
      // The body is optional, but Fastify validates an absent one as `undefined`, which no object
      // schema accepts: an absent body is read as an empty one.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        tags: TAGS,
        summary: 'Rotate the client secret',
        description:
          'A new secret works at once; the ones in use keep working until `previousSecretsExpireAt` ' +
          '(`graceSeconds` from now, a day by default; 0 cuts them off now). A revoked app cannot be rotated.',
        params: OAuthAppParamsSchema,
        body: Type.Optional(ClientSecretRotationInputSchema),
        response: { 200: RotatedClientSecretSchema },
      },
    },
    async (request) =>
      apps.rotateSecret(
        request.console.tenant.id,
        request.params.appId,
        request.console.actor,
        request.body?.graceSeconds,
      ),
  )

  app.post(
    '/oauth-apps/:appId/revoke',
    {
      config: { access: 'write' },
      schema: {
        tags: TAGS,
        summary: 'Revoke an OAuth app',
        description:
          'Its secrets and every token issued to it are refused from the next request on. Revoking a ' +
          'revoked app changes nothing.',
        params: OAuthAppParamsSchema,
        response: { 200: OAuthAppSummarySchema },
      },
    },
    async (request) => apps.revoke(request.console.tenant.id, request.params.appId, request.console.actor),
  )
}
