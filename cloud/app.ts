import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import type { Redis } from 'ioredis'
import type { LoggerOptions } from 'pino'
import { pooledRandomBytes } from '../shared/random-pool.js'
import { nowMicros } from '../shared/time.js'
import type { CloudConfig } from './config.js'
import type { DatabaseHandle } from './db/database.js'
import { employeeRoutes } from './features/employees/routes.js'
import { healthRoutes } from './features/health/routes.js'
import { oauthMetadataRoute } from './features/oauth/metadata-route.js'
import { oauthRoutes } from './features/oauth/routes.js'
import { punchRoutes } from './features/punches/routes.js'
import authPlugin from './plugins/auth.js'
import browserOriginPlugin from './plugins/browser-origin.js'
import dbPlugin from './plugins/db.js'
import errorsPlugin, { frameworkErrors } from './plugins/errors.js'
import jsonBodyPlugin from './plugins/json-body.js'
import openapiPlugin from './plugins/openapi.js'
import { registerRateLimit } from './plugins/rate-limit.js'
import { createServices } from './services.js'
import { validatorCompiler } from './validation.js'

export interface RouteRecord {
  method: string
  url: string
  scope: string | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the app serves, for tests that must cover them all (tenant isolation, fuzzing). */
    routeTable: RouteRecord[]
  }
}

export interface AppOptions {
  config: Pick<CloudConfig, 'bodyLimitBytes' | 'trustProxy' | 'logLevel'> &
    Partial<Pick<CloudConfig, 'publicUrl' | 'oauthRateLimitPerIp' | 'oauthRateLimitPerClient'>>
  database: DatabaseHandle
  /** Shares rate-limit counters between instances; its owner closes it. */
  redis?: Redis
  /** Close the database when the app closes (the server does; tests that share one do not). */
  closeDatabase?: boolean
  /** The logger; by default pino at config.logLevel with secrets redacted. `false` for none. */
  logger?: FastifyBaseLogger | false
  /** The clock, in µs; tests move it. */
  now?: () => number
}

// DESIGN.md §3: secrets never reach the logs, whatever a request or an error carries.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.adminPassword',
  '*.key',
  '*.clientSecret',
  '*.client_secret',
  '*.access_token',
  '*.token',
  '*.secret',
]

// Query parameters whose values are never logged, should a client put a credential in a URL
// (RFC 6750 §2.3 allows access_token there; we do not accept it, but must not log it either).
const SECRET_PARAMETER =
  /([?&](?:access_token|token|client_secret|secret|api_key|apikey|key|password)=)[^&#]*/gi

/** A request as the logs show it: method, URL with secret parameters censored, addresses. */
function requestForLog(request: {
  method?: string
  url?: string
  host?: string
  ip?: string
  socket?: { remotePort?: number }
}) {
  return {
    method: request.method,
    url: request.url?.replace(SECRET_PARAMETER, '$1[redacted]'),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** pino options for every Hajri cloud process: level, secrets redacted. */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { req: requestForLog } }
}

/**
 * The OAuth endpoints check client secrets, so they are limited against guessing: per address,
 * and per client id. A site agent needs one token an hour; an HR backend, a few. Defaults of
 * HAJRI_OAUTH_RATE_LIMIT_PER_IP and HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT.
 */
export const OAUTH_REQUESTS_PER_IP_PER_MINUTE = 300
export const OAUTH_REQUESTS_PER_CLIENT_PER_MINUTE = 60

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/

/** Keeps a caller's X-Request-Id when it is sane, so one id follows a request across systems. */
function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id']
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given
  return `req_${pooledRandomBytes(12).toString('base64url')}`
}

/** Builds the cloud app: plugins, then one route plugin per feature (DESIGN.md §1, §7). */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options
  const now = options.now ?? nowMicros
  const serverOptions: FastifyServerOptions = {
    genReqId: requestId,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    // Fastify also takes a hop count here, which its types leave out.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    return503OnClosing: true,
    // Keep-alive sockets would hold a graceful shutdown open until they time out.
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors,
  }
  if (options.logger === false) serverOptions.logger = false
  else if (options.logger) serverOptions.loggerInstance = options.logger
  else serverOptions.logger = loggerOptions(config.logLevel)
  const app = Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(validatorCompiler)
  const routeTable: RouteRecord[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) routeTable.push({ method, url: route.url, scope: route.config?.scope })
  })
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  await app.register(errorsPlugin)
  await app.register(jsonBodyPlugin)
  await app.register(dbPlugin, { database, closeOnStop: options.closeDatabase ?? true })
  await app.register(openapiPlugin)

  const services = createServices(database, now)
  const issuer = (request: FastifyRequest) =>
    config.publicUrl ?? `${request.protocol}://${request.host}`.replace(/\/$/, '')
  const rateLimitStore = (nameSpace: string) => ({
    nameSpace,
    ...(options.redis ? { redis: options.redis } : {}),
  })

  await app.register(healthRoutes, { database })
  await app.register(oauthMetadataRoute, { issuer, fixedIssuer: config.publicUrl !== undefined })
  await app.register(
    async (api) => {
      await api.register(browserOriginPlugin)
      await api.register(authPlugin, { authenticator: services.authenticator })
      // Right after authentication, before the body is read: a client over its limit costs nothing
      // more. (DESIGN.md §2 says preHandler; onRequest keeps the same order and saves the parsing.)
      await registerRateLimit(api, rateLimitStore('hajri-rl-api:'), {
        hook: 'onRequest',
        keyGenerator: (request) => request.auth.credential.rateLimitKey,
        max: (request) => request.auth.credential.rateLimitPerMinute,
      })
      await api.register(employeeRoutes, { service: services.employees })
      await api.register(punchRoutes, { service: services.punches })
    },
    { prefix: '/api/public/v1' },
  )
  await app.register(
    async (oauth) => {
      await oauth.register(browserOriginPlugin)
      await oauth.register(oauthRoutes, {
        apps: services.oauthApps,
        tokens: services.tokens,
        issuer,
        rateLimit: rateLimitStore('hajri-rl-oauth:'),
        perIpPerMinute: config.oauthRateLimitPerIp ?? OAUTH_REQUESTS_PER_IP_PER_MINUTE,
        perClientPerMinute: config.oauthRateLimitPerClient ?? OAUTH_REQUESTS_PER_CLIENT_PER_MINUTE,
      })
    },
    { prefix: '/api/oauth' },
  )

  // Expired idempotency keys and long-expired tokens are dropped hourly, off the request path.
  const purge = setInterval(() => {
    Promise.all([services.idempotency.purgeExpired(), services.tokens.purgeExpired()]).then(
      ([keys, tokens]) => keys + tokens > 0 && app.log.info({ keys, tokens }, 'expired records purged'),
      (err) => app.log.warn({ err }, 'purge of expired records failed'),
    )
  }, 3_600_000)
  purge.unref()
  app.addHook('onClose', async () => clearInterval(purge))

  return app
}
