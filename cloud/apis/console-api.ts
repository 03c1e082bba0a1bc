import type { FastifyPluginAsync } from 'fastify'
import type { Redis } from 'ioredis'
import { apiKeyConsoleRoutes } from '../features/api-keys/console-routes.js'
import { attendanceConsoleRoutes } from '../features/attendance/console-routes.js'
import { auditConsoleRoutes } from '../features/audit/console-routes.js'
import { dashboardRoutes } from '../features/dashboard/routes.js'
import { employeeConsoleRoutes } from '../features/employees/console-routes.js'
import { oauthAppConsoleRoutes } from '../features/oauth/console-routes.js'
import { consoleSessionRoutes } from '../features/sessions/console-routes.js'
import { consoleUserRoutes } from '../features/users/console-routes.js'
import { webhookDeliveryRoutes } from '../features/webhooks/delivery-routes.js'
import { webhookEndpointRoutes } from '../features/webhooks/endpoint-routes.js'
import { rateLimitSettings, registerRateLimit } from '../http/rate-limit.js'
import type { ConsoleOrigin } from '../http/session-guard.js'
import consoleAuthPlugin from '../plugins/console-auth.js'
import type { Services } from '../services.js'

export interface ConsoleApiOptions {
  services: Pick<
    Services,
    | 'consoleSessions'
    | 'adminTokens'
    | 'webhookEndpoints'
    | 'webhookDeliveries'
    | 'apiKeys'
    | 'oauthApps'
    | 'employees'
    | 'audit'
    | 'dashboard'
    | 'consoleUsers'
    | 'attendance'
    | 'attendanceConfig'
    | 'corrections'
  >
  origin: ConsoleOrigin
  /** Shares the counters between instances. */
  redis: Redis | undefined
  /** Requests a minute one admin token or session may make (HAJRI_CONSOLE_RATE_LIMIT). */
  ratePerMinute: number
  /** Console sign-in requests a minute from one address, over the sign-in routes' own. */
  signInsPerIpPerMinute: number | undefined
}

const PREFIX = '/api/console/v1'

/**
 * The console API under /api/console/v1, which the console uses
 * (docs/decisions/0047-admin-tokens-and-sessions.md): the console's sign-in, then every other route
 * behind an admin token or a session cookie, with a limit per caller.
 */
export const consoleApi: FastifyPluginAsync<ConsoleApiOptions> = async (app, options) => {
  const { services, origin, redis } = options
  // The sign-in: its own scope, before the console API's, since signing in needs no
  // credential. The routes share the prefix.
  await app.register(consoleSessionRoutes, {
    prefix: PREFIX,
    sessions: services.consoleSessions,
    origin,
    rateLimit: rateLimitSettings('hajri-rl-sign-in:', redis),
    ...(options.signInsPerIpPerMinute ? { signInsPerIpPerMinute: options.signInsPerIpPerMinute } : {}),
  })
  await app.register(
    async (admin) => {
      await admin.register(consoleAuthPlugin, {
        authenticator: services.adminTokens,
        sessions: services.consoleSessions,
        origin,
      })
      await registerRateLimit(admin, rateLimitSettings('hajri-rl-console:', redis), {
        hook: 'onRequest',
        keyGenerator: (request) => request.console.rateLimitKey,
        max: options.ratePerMinute,
      })
      await admin.register(webhookEndpointRoutes, {
        endpoints: services.webhookEndpoints,
        deliveries: services.webhookDeliveries,
      })
      await admin.register(webhookDeliveryRoutes, { deliveries: services.webhookDeliveries })
      await admin.register(apiKeyConsoleRoutes, { apiKeys: services.apiKeys })
      await admin.register(oauthAppConsoleRoutes, { apps: services.oauthApps })
      await admin.register(employeeConsoleRoutes, { employees: services.employees })
      await admin.register(attendanceConsoleRoutes, {
        attendance: services.attendance,
        config: services.attendanceConfig,
        corrections: services.corrections,
      })
      await admin.register(auditConsoleRoutes, { audit: services.audit })
      await admin.register(dashboardRoutes, { dashboard: services.dashboard })
      await admin.register(consoleUserRoutes, { users: services.consoleUsers })
    },
    { prefix: PREFIX },
  )
}
