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
  const s = schema as { response?: Record<string, unknown>; security?: unknown }
  if (route.config?.access !== undefined) return { url, schema: documentConsoleRoute(s, route) }
  if (route.config?.consoleSession !== undefined) return { url, schema: documentSessionRoute(s, route) }
  if (scope === undefined) return { schema, url }
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

// RFC 9110 §9.2.1: safe methods change nothing, so a session needs no CSRF token for them.
const isSafe = (route: RouteOptions) =>
  (Array.isArray(route.method) ? route.method : [route.method]).every((m) => m === 'GET' || m === 'HEAD')

/**
 * The console API (/api/console/v1): an admin token, or the console's session cookie (with
 * the X-CSRF-Token header when the route changes something), and the problems every route may answer.
 */
function documentConsoleRoute(s: { response?: Record<string, unknown> }, route: RouteOptions) {
  return {
    ...s,
    security: [
      { adminToken: [] },
      isSafe(route) ? { consoleSession: [] } : { consoleSession: [], csrfToken: [] },
    ],
    response: {
      ...s.response,
      400: problemResponse('The request is not valid (`validation_failed` lists each field).'),
      401: problemResponse(
        'No admin token or session cookie (`authentication_required`), a token that is unknown, expired or revoked (`invalid_credential`), or a session that has ended (`session_expired`).',
      ),
      403: problemResponse(
        'Your role does not allow this (`insufficient_role`), the request came from a browser with a token (`browser_origin_forbidden`), a session request failed the CSRF check (`csrf_failed`), or the user must change their password first (`password_change_required`).',
      ),
      404: problemResponse("Not found in your tenant (another tenant's objects are never found)."),
      429: problemResponse('Rate limit exceeded (`rate_limited`); see Retry-After.'),
    },
  }
}

/** The console's session routes: the cookie alone (sign-in: nothing), and their own problems. */
function documentSessionRoute(s: { response?: Record<string, unknown> }, route: RouteOptions) {
  const signIn = route.config?.consoleSession === 'sign-in'
  const security = signIn
    ? []
    : isSafe(route)
      ? [{ consoleSession: [] }]
      : [{ consoleSession: [], csrfToken: [] }]
  return {
    ...s,
    security,
    response: {
      ...s.response,
      ...(isSafe(route)
        ? {}
        : { 400: problemResponse('The request is not valid (`validation_failed` lists each field).') }),
      401: problemResponse(
        signIn
          ? 'The email or the password is wrong (`invalid_credentials`; the same answer for both).'
          : 'No session cookie (`authentication_required`), or a session that has ended (`session_expired`).',
      ),
      403: problemResponse(
        signIn
          ? 'The request came from a page of another origin (`csrf_failed`).'
          : 'A foreign Origin or a missing X-CSRF-Token (`csrf_failed`), or a wrong current password (`current_password_incorrect`).',
      ),
      429: problemResponse(
        'A growing delay after failed sign-ins for this email from this address, or from this address (`login_locked`), or too many sign-in requests (`rate_limited`); see Retry-After.',
      ),
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
          'Errors are RFC 9457 problems with a stable `code`. The console API, under ' +
          "`/api/console/v1`, takes an admin token instead, or the console's session cookie.",
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: `An API key (\`hjk_...\`) or an OAuth access token (\`hja_...\`). Scopes: ${SCOPES.join(', ')}.`,
          },
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'The console API (`/api/console/v1`): an admin token (`hjt_...`) from ' +
              '`hajri-cloud admin-token create --tenant ID`.',
          },
          consoleSession: {
            type: 'apiKey',
            in: 'cookie',
            name: 'hajri_session',
            description:
              'The console: the session cookie set by `POST /api/console/v1/session` (HttpOnly, ' +
              "SameSite=Strict). Requests with an `Origin` header must come from this server's own origin.",
          },
          csrfToken: {
            type: 'apiKey',
            in: 'header',
            name: 'X-CSRF-Token',
            description:
              'With the session cookie, on every request that changes something: the `csrfToken` of ' +
              '`GET /api/console/v1/session`.',
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
                  'attendance:admin':
                    'Configure shifts and policies, correct punches, recompute and lock attendance',
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
