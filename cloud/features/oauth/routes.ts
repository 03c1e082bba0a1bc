import formbody from '@fastify/formbody'
import { Type } from '@sinclair/typebox'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  IntrospectionResponseSchema,
  OAuthErrorSchema,
  TokenOperationRequestSchema,
  TokenRequestSchema,
  TokenResponseSchema,
} from '../../../shared/oauth.js'
import { AppError } from '../../app-error.js'
import { classify } from '../../http/classify.js'
import { type RateLimitSettings, registerRateLimit } from '../../http/rate-limit.js'
import type { AuthenticatedClient, OAuthAppService } from './app-service.js'
import { clientCredentials, invalidClient } from './client-authentication.js'
import { fromProblem, OAuthError, oauthErrorBody } from './oauth-error.js'
import type { TokenService } from './token-service.js'

export interface OAuthRouteOptions {
  apps: OAuthAppService
  tokens: TokenService
  /** This server's issuer identifier (RFC 8414 §2), for introspection's `iss`. */
  issuer: (request: FastifyRequest) => string
  rateLimit: RateLimitSettings
  /** Requests per minute to the OAuth endpoints from one address. */
  perIpPerMinute: number
  /** Failed client authentications per minute for one client id from one address. */
  perClientPerMinute: number
}

// RFC 6749 §5.1: token responses, and errors, must not be cached.
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

const oauthResponses = (ok: object) => ({
  200: ok,
  400: { description: 'RFC 6749 §5.2 error', content: { 'application/json': { schema: OAuthErrorSchema } } },
  401: { description: '`invalid_client`', content: { 'application/json': { schema: OAuthErrorSchema } } },
})

/**
 * The key failed authentications are counted under: the client id the request names and the
 * address it came from. Client ids are not secret (they sit in agent configurations), so a count
 * per client id alone would let anyone who knows one keep its real owner from getting tokens.
 */
function failureKey(request: FastifyRequest): string {
  let clientId = '-'
  try {
    clientId = clientCredentials(request).clientId
  } catch {
    // No usable credentials: counted per address alone.
  }
  return `auth-failed:${clientId}|${request.ip}`
}

function checkParameters(request: FastifyRequest): void {
  const error = request.validationError
  if (!error) return
  // Repeated parameters arrive as arrays: RFC 6749 §3.2 forbids them.
  const field = error.validation?.[0]?.instancePath?.slice(1) || 'the request'
  throw new OAuthError('invalid_request', `${field} must be given once, as text.`)
}

/**
 * The OAuth 2.0 endpoints (docs/decisions/0016-oauth-client-credentials.md): token (RFC 6749 §4.4, client
 * credentials), revocation (RFC 7009) and introspection (RFC 7662). Bodies are form-encoded, as the RFCs
 * define, or JSON. Errors take the RFC 6749 §5.2 shape.
 */
export const oauthRoutes: FastifyPluginAsync<OAuthRouteOptions> = async (app, options) => {
  const { apps, tokens } = options
  await app.register(formbody, { bodyLimit: 16 * 1024 })
  // Against guessing secrets: every OAuth request counts against its address; failed client
  // authentications count against the client id and address (failureKey), and only failures do,
  // so whoever presents the right secret is never refused for someone else's wrong ones.
  await registerRateLimit(app, options.rateLimit, {
    global: true,
    hook: 'onRequest',
    max: options.perIpPerMinute,
    keyGenerator: (request) => `ip:${request.ip}`,
  })
  // A second limiter on the same plugin would be skipped (it runs once per request), so failures
  // are counted by hand, and refused the same way the plugin refuses.
  const failures = app.createRateLimit({ max: options.perClientPerMinute, keyGenerator: failureKey })
  const refuse = (count: { max: number; ttlInSeconds: number }) =>
    new AppError(
      'rate_limited',
      `More than ${count.max} failed authentications a minute for this client from this address. Retry in ${count.ttlInSeconds} s.`,
      { retryAfterSeconds: count.ttlInSeconds },
    )
  const authenticate = async (request: FastifyRequest): Promise<AuthenticatedClient> => {
    // An address over its failures for this client id is refused before its secret is looked at:
    // guessing from there stops. Read only: the check itself is not a failure.
    const before = await failures(request, { increment: false })
    if (!before.isAllowed && before.isExceeded) throw refuse(before)
    const credentials = clientCredentials(request)
    const client = await apps.authenticateClient(credentials.clientId, credentials.clientSecret)
    if (client) return client
    const after = await failures(request)
    if (!after.isAllowed && after.isExceeded) throw refuse(after)
    throw invalidClient('Unknown client, wrong secret, or a revoked app.')
  }

  app.setErrorHandler((err: FastifyError, request, reply: FastifyReply) => {
    let error: OAuthError
    if (err instanceof OAuthError) error = err
    else {
      const problem = classify(err)
      if (!problem || problem.status >= 500) request.log.error({ err }, 'OAuth request failed')
      error = problem
        ? fromProblem(problem)
        : new OAuthError('server_error', 'Something went wrong on our side.', 500)
    }
    return reply
      .code(error.status)
      .headers({ ...error.headers, ...NO_STORE })
      .type('application/json')
      .send(JSON.stringify(oauthErrorBody(error, request.id)))
  })

  const common = { attachValidation: true } as const

  app.post(
    '/token',
    {
      ...common,
      schema: {
        tags: ['OAuth'],
        summary: 'Get an access token (client credentials)',
        description:
          'RFC 6749 §4.4: `grant_type=client_credentials`, an optional `scope` (a subset of the app’s), ' +
          'client authentication by HTTP Basic (client_secret_basic) or in the body (client_secret_post). ' +
          'Tokens are opaque and last 3600 s.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequestSchema,
        response: oauthResponses(TokenResponseSchema),
      },
    },
    async (request, reply) => {
      checkParameters(request)
      const body = request.body as { grant_type?: string; scope?: string }
      if (body.grant_type === undefined) throw new OAuthError('invalid_request', 'grant_type is required.')
      const client = await authenticate(request)
      if (body.grant_type !== 'client_credentials') {
        throw new OAuthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported.')
      }
      const response = await tokens.issue(client, body.scope, request.ip)
      return reply.headers(NO_STORE).send(response)
    },
  )

  app.post(
    '/revoke',
    {
      ...common,
      schema: {
        tags: ['OAuth'],
        summary: 'Revoke an access token (RFC 7009)',
        description: 'Answers 200 whether or not the token was live; a token of another client is refused.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenOperationRequestSchema,
        response: oauthResponses(Type.Object({}, { additionalProperties: false })),
      },
    },
    async (request, reply) => {
      checkParameters(request)
      const client = await authenticate(request)
      const body = request.body as { token?: string }
      if (body.token === undefined) throw new OAuthError('invalid_request', 'token is required.')
      await tokens.revoke(client, body.token, request.ip)
      return reply.headers(NO_STORE).send({})
    },
  )

  app.post(
    '/introspect',
    {
      ...common,
      schema: {
        tags: ['OAuth'],
        summary: 'Inspect an access token (RFC 7662)',
        description: 'A client may inspect its own tokens; any other token is reported inactive.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenOperationRequestSchema,
        response: oauthResponses(IntrospectionResponseSchema),
      },
    },
    async (request, reply) => {
      checkParameters(request)
      const client = await authenticate(request)
      const body = request.body as { token?: string }
      if (body.token === undefined) throw new OAuthError('invalid_request', 'token is required.')
      return reply
        .headers(NO_STORE)
        .send(await tokens.introspect(client, body.token, options.issuer(request)))
    },
  )
}
