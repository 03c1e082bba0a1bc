import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuditListQuerySchema, AuditPageSchema } from '../../../shared/audit.js'
import { declareRoute } from '../../http/declare-route.js'
import type { AuditService } from './service.js'

/** The tenant's audit log, under /api/console/v1. Read-only, like the log
 * (docs/decisions/0017-append-only-audit-log.md).
 */
export const auditConsoleRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (
  app,
  { audit },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/audit',
    config: { access: 'read' },
    tags: ['Audit log'],
    summary: 'List audit entries, newest first',
    description:
      'Filters combine. One object’s history: `targetId` (an OAuth app’s: `targetId=app_...`; the ' +
      'tokens it obtained: `actor=oauth_app:app_...`). `from` is inclusive, `to` exclusive.',
    querystring: AuditListQuerySchema,
    response: AuditPageSchema,
    handle: (request) => audit.list(request.console.tenant.id, request.query),
  })
}
