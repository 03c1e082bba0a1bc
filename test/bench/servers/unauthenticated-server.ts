import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyServerOptions } from 'fastify'
import type { AuthContext } from '../../../cloud/auth/auth-context.js'
import { DEFAULT_BACKFILL_DAYS, DEFAULT_TIME_ZONE } from '../../../cloud/auth/tenant-context.js'
import { loadCloudConfig } from '../../../cloud/config.js'
import { openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import { employeeRoutes } from '../../../cloud/features/employees/routes.js'
import dbPlugin from '../../../cloud/plugins/db.js'
import errorsPlugin, { frameworkErrors } from '../../../cloud/plugins/errors.js'
import jsonBodyPlugin from '../../../cloud/plugins/json-body.js'
import openapiPlugin from '../../../cloud/plugins/openapi.js'
import { createServices } from '../../../cloud/services.js'
import { validatorCompiler } from '../../../cloud/validation.js'
import { pooledRandomBytes } from '../../../shared/random-pool.js'
import { serveInChild } from './serve-in-child.js'

/**
 * The baseline of the authenticated-route benchmark: the cloud's employee routes as buildApp
 * (cloud/app.ts) serves them — same server options, same plugins (errors, JSON body, database,
 * OpenAPI), same route plugin and service over the same SQLite file — except that the public API
 * scope has neither the browser-origin check, nor authentication, nor the rate limiter: a hook
 * hands every request one fixed tenant instead. What the real app costs beyond this is the price of
 * checking the credential and counting it. argv[2]: the database URL; argv[3]: the tenant id.
 */
await serveInChild(async () => {
  const [url, tenantId] = process.argv.slice(2)
  if (!url || !tenantId) throw new Error('usage: unauthenticated-server.ts <database url> <tenant id>')
  const config = loadCloudConfig({ HAJRI_DATABASE_URL: url, HAJRI_LOG_LEVEL: 'silent' })
  const database = openDatabase(config.databaseUrl)
  await migrateToLatest(database.db)
  const services = createServices(database)

  // What the auth plugin would have set for the bench tenant's key.
  const auth: AuthContext = {
    tenant: { id: tenantId, timeZone: DEFAULT_TIME_ZONE, backfillDays: DEFAULT_BACKFILL_DAYS },
    credential: {
      kind: 'api_key',
      id: 'key_baseline',
      scopes: ['employees:read', 'attendance:read', 'attendance:write'],
      rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
      rateLimitKey: 'key:key_baseline',
    },
  }

  // The server options of buildApp, so that request ids, routing and error handling cost the same.
  const serverOptions: FastifyServerOptions = {
    logger: false,
    genReqId: () => `req_${pooledRandomBytes(12).toString('base64url')}`,
    bodyLimit: config.bodyLimitBytes,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors,
  }
  const app = Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id)
  })
  await app.register(errorsPlugin)
  await app.register(jsonBodyPlugin)
  await app.register(dbPlugin, { database, closeOnStop: true })
  await app.register(openapiPlugin)
  await app.register(
    async (api) => {
      api.decorateRequest('auth', null as unknown as AuthContext)
      api.addHook('onRequest', async (request) => {
        request.auth = auth
      })
      await api.register(employeeRoutes, { service: services.employees })
    },
    { prefix: '/api/public/v1' },
  )
  return app
})
