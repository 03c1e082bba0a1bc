import type { Server } from 'node:http'
import cookiePlugin from '@fastify/cookie'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyServerOptions,
} from 'fastify'
import type { Redis } from 'ioredis'
import { pooledRandomBytes } from '../shared/random-pool.js'
import { nowMicros } from '../shared/time.js'
import { consoleApi } from './apis/console-api.js'
import { oauthApi } from './apis/oauth-api.js'
import { publicApi } from './apis/public-api.js'
import { backgroundJobs } from './background-jobs.js'
import type { CloudConfig } from './config.js'
import type { DatabaseHandle } from './db/database.js'
import { pingDatabase } from './db/ping-database.js'
import { healthRoutes } from './features/health/routes.js'
import { refuseUnhonouredIdempotencyKeys } from './features/idempotency/unhonoured-key.js'
import { AccessLogController } from './http/access-log-controller.js'
import { consoleOrigin } from './http/session-guard.js'
import { loggerOptions } from './logger-options.js'
import { CloudMetrics } from './metrics/cloud-metrics.js'
import { refuseUndeclaredBodies } from './plugins/bodyless-routes.js'
import dbPlugin from './plugins/db.js'
import errorsPlugin, { frameworkErrors } from './plugins/errors.js'
import hostHeaderPlugin from './plugins/host-header.js'
import jsonBodyPlugin from './plugins/json-body.js'
import openapiPlugin from './plugins/openapi.js'
import routeTablePlugin from './plugins/route-table.js'
import securityHeadersPlugin, { applySecurityHeaders } from './plugins/security-headers.js'
import staticConsolePlugin from './plugins/static-console.js'
import { createServices, type Services } from './services.js'
import {
  DEFAULT_CONSOLE_RATE_LIMIT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
} from './settings/rate-limits.js'
import { type ServerTimeouts, serverTimeoutOptions, serverTimeouts } from './settings/server-timeouts.js'
import { DEFAULT_WEBHOOK_SETTINGS } from './settings/webhook-settings.js'
import { Stores } from './stores.js'
import { validatorCompiler } from './validation.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The services the routes use, for the CLI-less administration a test needs. */
    services: Services
    /** The Prometheus metrics, served by `serve` on a listener of their own (metrics/metrics-listener.ts). */
    metrics: CloudMetrics
  }
}

export interface AppOptions {
  config: Pick<CloudConfig, 'bodyLimitBytes' | 'trustProxy' | 'logLevel'> &
    Partial<
      Pick<
        CloudConfig,
        | 'publicUrl'
        | 'oauthRateLimitPerIp'
        | 'oauthRateLimitPerClient'
        | 'consoleRateLimit'
        | 'idempotencyMaxBytesPerCredential'
        | 'webhooks'
        | 'headersTimeoutSeconds'
        | 'requestTimeoutSeconds'
        | 'idleTimeoutSeconds'
        | 'keepAliveTimeoutSeconds'
      >
    >
  database: DatabaseHandle
  /** Shares rate-limit counters between instances; its owner closes it. */
  redis?: Redis
  /** Close the database when the app closes (the server does; tests that share one do not). */
  closeDatabase?: boolean
  /** The logger; by default pino at config.logLevel with secrets redacted. `false` for none. */
  logger?: FastifyBaseLogger | false
  /** The clock, in µs; tests move it. */
  now?: () => number
  /** Run the webhook dispatcher in this process: the server does; tests choose. */
  dispatchWebhooks?: boolean
  /** Run the attendance worker in this process: the server does; tests choose. */
  computeAttendance?: boolean
  /** Console sign-in requests a minute from one address; by default SIGN_INS_PER_IP_PER_MINUTE. */
  signInsPerIpPerMinute?: number
  /** Slow-client timeouts in ms, over config's (tests use short ones); see settings/server-timeouts.ts. */
  serverTimeouts?: Partial<ServerTimeouts>
  /** The metrics to record into; by default the app's own. */
  metrics?: CloudMetrics
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/

/** Keeps a caller's X-Request-Id when it is sane, so one id follows a request across systems. */
function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id']
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given
  return `req_${pooledRandomBytes(12).toString('base64url')}`
}

/**
 * HAJRI_TRUST_PROXY as Fastify takes it. A hop count trusts that many proxies nearest to us, as
 * documented (docs/operators/production.md#tls-the-proxy-and-hajri_trust_proxy, deploy/Caddyfile) and as
 * Express reads one. Fastify 5.12 trusts nothing for a number ("fail closed"), so behind the compose file's
 * Caddy (HAJRI_TRUST_PROXY=1) every client had Caddy's address: one sign-in and token-endpoint limit, and one
 * lockout, for everyone, and the audit log naming the proxy (found by the security tests). Passed as a
 * function, the count means what it says; it is only safe where nothing but the proxies can reach us
 * (docs/operators/production.md#tls-the-proxy-and-hajri_trust_proxy).
 */
function trustProxyOption(value: CloudConfig['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof value !== 'number') return value
  const hops = value
  return (_address: string, hop: number) => hop < hops
}

/**
 * Builds the cloud app: the cross-cutting plugins, then the health routes, the public, console and OAuth
 * APIs (apis/, each with its own authentication and limits) and the console's files, in that order
 * (docs/development/architecture.md#cloud-layers).
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options
  const now = options.now ?? nowMicros
  const origin = consoleOrigin(config.publicUrl)
  const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : seconds * 1000)
  const timeouts = serverTimeouts({
    headersMs: ms(config.headersTimeoutSeconds),
    requestMs: ms(config.requestTimeoutSeconds),
    idleMs: ms(config.idleTimeoutSeconds),
    keepAliveMs: ms(config.keepAliveTimeoutSeconds),
    ...options.serverTimeouts,
  } as Partial<ServerTimeouts>)
  const serverOptions: FastifyHttpOptions<Server> = {
    genReqId: requestId,
    logController: new AccessLogController({ requestIdLogLabel: 'requestId' }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    return503OnClosing: true,
    // Keep-alive sockets would hold a graceful shutdown open until they time out.
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Router errors are answered before any hook runs: they get the security headers here.
    frameworkErrors: (err, request, reply) => {
      applySecurityHeaders(request, reply, origin)
      frameworkErrors(err, request, reply)
    },
    // Slow clients are cut off (OWASP API4:2023): see settings/server-timeouts.ts.
    ...serverTimeoutOptions(timeouts),
  }
  if (options.logger === false) serverOptions.logger = false
  else if (options.logger) serverOptions.loggerInstance = options.logger
  else serverOptions.logger = loggerOptions(config.logLevel)
  const app = Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(validatorCompiler)
  const metrics = options.metrics ?? new CloudMetrics(database.dialect)
  // Every answer, errors and refusals included, by its route's pattern (added first, so every route
  // has it): a URL that matched no route is one label value, whatever it was.
  app.addHook('onResponse', async (request, reply) => {
    metrics.request(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    )
  })
  await app.register(routeTablePlugin)
  // A route that declares no body takes none (OWASP API3:2023): see bodyless-routes.ts.
  app.addHook('onRoute', refuseUndeclaredBodies)
  // Idempotency-Key is refused, never ignored, where a route does not honour it: see unhonoured-key.ts.
  app.addHook('onRoute', refuseUnhonouredIdempotencyKeys)
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })

  await app.register(errorsPlugin)
  await app.register(hostHeaderPlugin)
  // Every answer's security headers (OWASP API8:2023), errors and the console's files included.
  await app.register(securityHeadersPlugin, { origin })
  await app.register(jsonBodyPlugin)
  // The console's session cookie (docs/decisions/0045-console-sessions.md); parsed onRequest, before any
  // authentication.
  await app.register(cookiePlugin)
  await app.register(dbPlugin, { database, closeOnStop: options.closeDatabase ?? true })
  await app.register(openapiPlugin)

  const webhooks = config.webhooks ?? DEFAULT_WEBHOOK_SETTINGS
  const services = createServices(database, {
    now,
    webhooks,
    idempotencyMaxBytesPerCredential: config.idempotencyMaxBytesPerCredential,
    metrics,
  })
  app.decorate('services', services)
  app.decorate('metrics', metrics)
  const deliveries = new Stores(database.db).deliveries
  metrics.readFrom({
    pool: () => database.poolStats?.(),
    webhooksOwedSeconds: async () => {
      const at = now()
      const since = await deliveries.owedSince(at)
      return since === null ? 0 : Math.max(0, (at - since) / 1_000_000)
    },
  })

  await app.register(healthRoutes, { pingDatabase: () => pingDatabase(database.db) })
  await app.register(publicApi, { services, redis: options.redis })
  await app.register(consoleApi, {
    services,
    origin,
    redis: options.redis,
    ratePerMinute: config.consoleRateLimit ?? DEFAULT_CONSOLE_RATE_LIMIT,
    signInsPerIpPerMinute: options.signInsPerIpPerMinute,
  })
  await app.register(oauthApi, {
    services,
    publicUrl: config.publicUrl,
    redis: options.redis,
    perIpPerMinute: config.oauthRateLimitPerIp ?? DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
    perClientPerMinute: config.oauthRateLimitPerClient ?? DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
  })
  // The console's files: a single-page app on the console API above.
  await app.register(staticConsolePlugin)

  await app.register(backgroundJobs, {
    services,
    database,
    webhooks,
    dispatchWebhooks: options.dispatchWebhooks ?? false,
    computeAttendance: options.computeAttendance ?? false,
    metrics,
    now,
  })

  return app
}
