import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  DeliveriesPerDayQuerySchema,
  DeliveriesPerDaySchema,
  PunchesPerHourQuerySchema,
  PunchesPerHourSchema,
} from '../../../shared/dashboard.js'
import { declareRoute } from '../../http/declare-route.js'
import type { DashboardService } from './service.js'

const TAGS = ['Dashboard']

/** The console's charts, under /api/console/v1, told in the tenant's time zone. */
export const dashboardRoutes: FastifyPluginAsyncTypebox<{ dashboard: DashboardService }> = async (
  app,
  { dashboard },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/dashboard/punches-per-hour',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'Punches per hour',
    description:
      'Punches by when they happened (`punchedAt`), per hour of the tenant’s clock, over the last ' +
      '`hours` hours: every hour is listed, with 0 when it had none.',
    querystring: PunchesPerHourQuerySchema,
    response: PunchesPerHourSchema,
    handle: (request) => dashboard.punchesPerHour(request.console.tenant, request.query.hours ?? 24),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/dashboard/webhook-deliveries',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'Webhook delivery outcomes per day',
    description:
      'Deliveries created on each of the tenant’s last `days` days, by their status now: a success ' +
      'rate per day is succeeded / (succeeded + exhausted).',
    querystring: DeliveriesPerDayQuerySchema,
    response: DeliveriesPerDaySchema,
    handle: (request) => dashboard.deliveriesPerDay(request.console.tenant, request.query.days ?? 7),
  })
}
