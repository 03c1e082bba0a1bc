import type { FastifyPluginAsync } from 'fastify'
import type { Redis } from 'ioredis'
import { publicActor } from '../auth/public-actor.js'
import { attendanceRoutes } from '../features/attendance/routes.js'
import { employeeRoutes } from '../features/employees/routes.js'
import { punchRoutes } from '../features/punches/routes.js'
import { webhookEventTypeRoute } from '../features/webhooks/event-type-route.js'
import { rateLimitSettings, registerRateLimit } from '../http/rate-limit.js'
import authPlugin from '../plugins/auth.js'
import browserOriginPlugin from '../plugins/browser-origin.js'
import type { Services } from '../services.js'

export interface PublicApiOptions {
  services: Pick<
    Services,
    'authenticator' | 'employees' | 'punches' | 'attendance' | 'attendanceConfig' | 'corrections'
  >
  /** Shares the per-credential counters between instances. */
  redis: Redis | undefined
}

const PREFIX = '/api/public/v1'

/**
 * The public API under /api/public/v1: an API key or OAuth access token with each route's scope
 * (docs/decisions/0004-bearer-credentials-and-scopes.md), never from a browser, and a limit per
 * credential (docs/decisions/0012-per-credential-rate-limits.md).
 */
export const publicApi: FastifyPluginAsync<PublicApiOptions> = async (app, { services, redis }) => {
  await app.register(
    async (api) => {
      await api.register(browserOriginPlugin)
      await api.register(authPlugin, { authenticator: services.authenticator })
      // Right after authentication, before the body is read: a client over its limit costs nothing
      // more. Registered onRequest rather than preHandler: the same order, and the parsing saved
      // (docs/decisions/0038-rate-limit-in-onrequest.md).
      await registerRateLimit(api, rateLimitSettings('hajri-rl-api:', redis), {
        hook: 'onRequest',
        keyGenerator: (request) => request.auth.credential.rateLimitKey,
        max: (request) => request.auth.credential.rateLimitPerMinute,
      })
      await api.register(employeeRoutes, { service: services.employees })
      await api.register(punchRoutes, { service: services.punches, corrections: services.corrections })
      await api.register(attendanceRoutes, {
        attendance: services.attendance,
        config: services.attendanceConfig,
        corrections: services.corrections,
        access: { read: { scope: 'attendance:read' }, admin: { scope: 'attendance:admin' } },
        tags: ['Attendance days'],
        tenantOf: (request) => request.auth.tenant,
        actorOf: publicActor,
        bearerCallers: true,
      })
    },
    { prefix: PREFIX },
  )
  // The event catalog is the same for everyone and secret to no one: no credential
  // (docs/decisions/0051-public-event-catalog.md).
  await app.register(webhookEventTypeRoute, { prefix: PREFIX })
}
