import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { PunchInputSchema, PunchSchema } from '../../../shared/punch.js'
import { declareRoute } from '../../http/declare-route.js'
import type { AttendanceService } from './attendance-service.js'
import type { AttendanceConfigService } from './config-service.js'
import type { CorrectionService } from './correction-service.js'
import { attendanceRoutes } from './routes.js'

const TAGS = ['Attendance (console API)']

/**
 * Attendance as a tenant's admin sees it, under /api/console/v1: the same routes as the public
 * API's, readable by every role and changed by those who may write; and the manual punch, which in
 * the public API shares the punch route.
 */
export const attendanceConsoleRoutes: FastifyPluginAsyncTypebox<{
  attendance: AttendanceService
  config: AttendanceConfigService
  corrections: CorrectionService
}> = async (app, { attendance, config, corrections }) => {
  await app.register(attendanceRoutes, {
    attendance,
    config,
    corrections,
    access: { read: { access: 'read' }, admin: { access: 'write' } },
    tags: TAGS,
    tenantOf: (request) => request.console.tenant,
    actorOf: (request) => request.console.actor,
  })

  declareRoute(app, {
    method: 'POST',
    url: '/attendance/punches',
    config: { access: 'write' },
    tags: TAGS,
    summary: 'Add a manual punch (a correction)',
    description:
      'With `source: manual` and a `reason`. Stored in the punch log, audited, and its day recomputed.',
    body: PunchInputSchema,
    status: 201,
    response: PunchSchema,
    handle: async (request) =>
      (await corrections.addManualPunch(request.console.tenant, request.body, request.console.actor)).body,
  })
}
