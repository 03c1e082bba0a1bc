import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyServerOptions,
  LogController,
} from 'fastify'
import type { LoggerOptions } from 'pino'
import { pooledRandomBytes } from '../shared/random-pool.js'
import { nowMicros } from '../shared/time.js'
import type { CloudConfig } from './config.js'
import type { DatabaseHandle } from './db/database.js'
import { ApiKeyService } from './features/credentials/service.js'
import { employeeRoutes } from './features/employees/routes.js'
import { EmployeeService } from './features/employees/service.js'
import { healthRoutes } from './features/health/routes.js'
import { IdempotencyService } from './features/idempotency/service.js'
import { punchRoutes } from './features/punches/routes.js'
import { PunchService } from './features/punches/service.js'
import authPlugin from './plugins/auth.js'
import dbPlugin from './plugins/db.js'
import errorsPlugin, { frameworkErrors } from './plugins/errors.js'
import jsonBodyPlugin from './plugins/json-body.js'
import openapiPlugin from './plugins/openapi.js'
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
  config: Pick<CloudConfig, 'bodyLimitBytes' | 'trustProxy' | 'logLevel'>
  database: DatabaseHandle
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
  'res.headers["set-cookie"]',
  '*.password',
  '*.adminPassword',
  '*.key',
  '*.clientSecret',
  '*.client_secret',
  '*.secret',
]

/** pino options for every Hajri cloud process: level, and secrets redacted. */
export function loggerOptions(level: string): LoggerOptions {
  return { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }
}

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

  const db = database.db
  const idempotency = new IdempotencyService({ db, now })
  const apiKeys = new ApiKeyService({ db, now })
  const employees = new EmployeeService({ db, now })
  const punches = new PunchService({ db, transact: database.transact, idempotency, now })

  await app.register(healthRoutes, { database })
  await app.register(
    async (api) => {
      await api.register(authPlugin, { authenticator: apiKeys })
      await api.register(employeeRoutes, { service: employees })
      await api.register(punchRoutes, { service: punches })
    },
    { prefix: '/api/public/v1' },
  )

  // Idempotency keys live 24 h; drop the expired ones hourly, off the request path.
  const purge = setInterval(() => {
    idempotency.purgeExpired().then(
      (n) => n > 0 && app.log.info({ purged: n }, 'expired idempotency keys purged'),
      (err) => app.log.warn({ err }, 'idempotency key purge failed'),
    )
  }, 3_600_000)
  purge.unref()
  app.addHook('onClose', async () => clearInterval(purge))

  return app
}
