import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyPluginAsync, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { PROBLEM_CONTENT_TYPE, ProblemSchema } from '../../shared/problem.js'
import { SCOPES } from '../../shared/scopes.js'

const problemResponse = (description: string) => ({
  description,
  content: { [PROBLEM_CONTENT_TYPE]: { schema: ProblemSchema } },
})

/**
 * Adds what every public route has in common to its documented schema: the bearer requirement with
 * the route's scope, and the problem responses. Keeps route files to what is particular to them.
 */
function documentRoute({ schema, url, route }: { schema: object; url: string; route: RouteOptions }) {
  const scope = route.config?.scope
  if (scope === undefined) return { schema, url }
  const s = schema as { response?: Record<string, unknown>; security?: unknown }
  return {
    url,
    schema: {
      ...s,
      // Either credential works: an API key, or an OAuth access token with the scope.
      security: [{ bearerAuth: [scope] }, { oauth2: [scope] }],
      response: {
        ...s.response,
        400: problemResponse('The request is not valid (`validation_failed` lists each field).'),
        401: problemResponse('No credential, or one that is unknown, expired or revoked.'),
        403: problemResponse(
          'The credential lacks the scope this route needs (`insufficient_scope`), or the request came from a browser (`browser_origin_forbidden`).',
        ),
        429: problemResponse('Rate limit exceeded (`rate_limited`); see Retry-After.'),
      },
    },
  }
}

/** OpenAPI 3.1 from the same TypeBox schemas that validate requests: /openapi.json, rendered at /docs. */
const openapiPlugin: FastifyPluginAsync = async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Hajri API',
        version: '1',
        description:
          'Tenant-scoped employee directory and attendance punch ingestion. Every request carries ' +
          '`Authorization: Bearer <API key or access token>`; the tenant comes from the credential. ' +
          'Errors are RFC 9457 problems with a stable `code`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `An API key (\`hjk_...\`) or an OAuth access token (\`hja_...\`). Scopes: ${SCOPES.join(', ')}.`,
          },
          oauth2: {
            type: 'oauth2',
            description:
              'Client credentials (RFC 6749 §4.4); metadata at /.well-known/oauth-authorization-server.',
            flows: {
              clientCredentials: {
                tokenUrl: '/api/oauth/token',
                scopes: {
                  'employees:read': 'Read the employee directory',
                  'attendance:read': 'Read the raw punch log',
                  'attendance:write': 'Record punches',
                },
              },
            },
          },
        },
      },
    },
    transform: documentRoute as never,
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'hajri-openapi' })
