import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifyRequest } from 'fastify'
import {
  AssignmentInputSchema,
  AssignmentSchema,
  AttendanceDayDetailSchema,
  AttendanceDayListQuerySchema,
  AttendanceDayPageSchema,
  AttendanceDayParamsSchema,
  AttendanceExportQuerySchema,
  AttendanceSummaryListSchema,
  AttendanceSummaryQuerySchema,
  CorrectionSchema,
  HolidayInputSchema,
  HolidaySchema,
  IdParamsSchema,
  LockInputSchema,
  PolicyInputSchema,
  PolicySchema,
  RecomputeInputSchema,
  RecomputeJobSchema,
  ShiftInputSchema,
  ShiftParamsSchema,
  ShiftSchema,
  VoidInputSchema,
} from '../../../shared/attendance.js'
import { PageQueryFields } from '../../../shared/pagination.js'
import { PunchParamsSchema } from '../../../shared/punch.js'
import type { Actor } from '../../auth/actor.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import { declareRoute } from '../../http/declare-route.js'
import { readForCachedCaller } from '../../http/read-for-cached-caller.js'
import type { AttendanceService } from './attendance-service.js'
import type { AttendanceConfigService } from './config-service.js'
import type { CorrectionService } from './correction-service.js'

export interface AttendanceRouteOptions {
  attendance: AttendanceService
  config: AttendanceConfigService
  corrections: CorrectionService
  /** Who may read, and who may configure and correct: a public route's scope, a console route's access. */
  access: { read: FastifyContextConfig; admin: FastifyContextConfig }
  tags: string[]
  tenantOf: (request: FastifyRequest) => TenantContext
  actorOf: (request: FastifyRequest) => Actor
  /**
   * The public API's bearer callers: the list of days may take one from the credential cache, its
   * page's statement checking it (docs/decisions/0094-reads-check-a-cached-credential.md). The
   * console's callers have no bearer credential.
   */
  bearerCallers?: true
}

const listOf = <T extends Parameters<typeof Type.Array>[0]>(item: T, title: string) =>
  Type.Object({ data: Type.Array(item) }, { title, additionalProperties: false })

const CSV_MEDIA_TYPE = 'text/csv; charset=utf-8'

/**
 * The attendance API (docs/integrators/attendance.md), the same in the public API and the
 * console's: only who may call it, and so where the tenant and the actor come from, differ.
 */
export const attendanceRoutes: FastifyPluginAsyncTypebox<AttendanceRouteOptions> = async (app, options) => {
  const { attendance, config, corrections, access, tags, tenantOf, actorOf } = options
  const tenantId = (request: FastifyRequest) => tenantOf(request).id

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/days',
    config: options.bearerCallers ? { ...access.read, liveCredentialCheckedByRead: true } : access.read,
    tags,
    summary: 'List or sync attendance days',
    description:
      'Without `updatedSince`: days by employee code, then work date. With `updatedSince`: days changed at or after ' +
      'that time, oldest change first, so a sync never misses a revision (store the last `updatedAt` you saw).',
    querystring: AttendanceDayListQuerySchema,
    response: AttendanceDayPageSchema,
    handle: (request) =>
      options.bearerCallers
        ? readForCachedCaller(
            request,
            (caller) => attendance.listForCachedCaller(tenantOf(request), request.query, caller),
            () => attendance.list(tenantOf(request), request.query),
          )
        : attendance.list(tenantOf(request), request.query),
  })

  app.route({
    method: 'GET',
    url: '/attendance/days.csv',
    config: access.read,
    schema: {
      tags,
      summary: 'Export attendance days as CSV, for payroll',
      description:
        'One line per day, employee code then work date, with a header. Cells that a spreadsheet would read as a ' +
        "formula are prefixed with `'`. At most 62 days.",
      querystring: AttendanceExportQuerySchema,
      produces: ['text/csv'],
      response: {
        200: {
          description: 'The days, as CSV (RFC 4180), UTF-8, CRLF line ends.',
          // A plain JSON Schema rather than TypeBox's: the body is a stream, not a string the reply types.
          content: { 'text/csv': { schema: { type: 'string' } } },
        },
      },
    },
    handler: async (request, reply) => {
      const query = request.query as (typeof AttendanceExportQuerySchema)['static']
      const tenant = tenantOf(request)
      const lines = attendance.exportCsv(tenant, query)
      // The first chunk is awaited here, so a bad range is a problem answer, not a broken stream.
      const first = await lines.next()
      async function* rest() {
        if (!first.done) yield first.value
        yield* lines
      }
      return reply
        .type(CSV_MEDIA_TYPE)
        .header('content-disposition', `attachment; filename="attendance-${query.from}-${query.to}.csv"`)
        .send(Readable.from(rest()))
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/days/:employeeCode/:workDate',
    config: access.read,
    tags,
    summary: "One employee's day, with its pairs and an explanation of each figure",
    params: AttendanceDayParamsSchema,
    response: AttendanceDayDetailSchema,
    handle: (request) =>
      attendance.get(tenantOf(request), request.params.employeeCode, request.params.workDate),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/summaries',
    config: access.read,
    tags,
    summary: 'Period totals per employee, for payroll',
    description:
      "Weekly overtime is counted in the period that holds the week's last day, and never twice: pass " +
      'consecutive periods and add them up.',
    querystring: AttendanceSummaryQuerySchema,
    response: AttendanceSummaryListSchema,
    handle: (request) => attendance.summaries(tenantOf(request), request.query),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/attendance/recompute',
    config: access.admin,
    tags,
    summary: 'Recompute days over a range, as a job',
    description:
      'Answers 202 with the job; follow it at GET /attendance/jobs/{id}. Ingestion goes on meanwhile.',
    body: RecomputeInputSchema,
    status: 202,
    response: RecomputeJobSchema,
    handle: async (request, reply) => {
      const job = await attendance.startRecompute(tenantOf(request), request.body, actorOf(request))
      reply.header('location', `${request.url.replace(/\/recompute$/, '')}/jobs/${job.id}`)
      return job
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/jobs/:id',
    config: access.read,
    tags,
    summary: 'A recompute job and its progress',
    params: IdParamsSchema,
    response: RecomputeJobSchema,
    handle: (request) => attendance.getJob(tenantOf(request), request.params.id),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/attendance/lock',
    config: access.admin,
    tags,
    summary: 'Lock a period once payroll has closed it',
    description:
      'Every day in it must be final (409 `days_not_final` otherwise). A locked day never changes: a punch that ' +
      'arrives for it later is kept in the punch log and flagged on the day (`PUNCH_AFTER_LOCK`).',
    body: LockInputSchema,
    response: Type.Object({ locked: Type.Integer() }, { additionalProperties: false }),
    handle: (request) => attendance.lock(tenantOf(request), request.body, actorOf(request)),
  })

  declareRoute(app, {
    method: 'POST',
    url: '/attendance/punches/:punchId/void',
    config: access.admin,
    tags,
    summary: 'Void a punch',
    description: 'The punch stays in the raw log and leaves its day, which is recomputed. Audited.',
    params: PunchParamsSchema,
    body: VoidInputSchema,
    response: CorrectionSchema,
    handle: (request) =>
      corrections.voidPunch(tenantOf(request), request.params.punchId, request.body.reason, actorOf(request)),
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/corrections',
    config: access.read,
    tags,
    summary: 'Manual punches and voids, newest first',
    querystring: Type.Object(PageQueryFields, { additionalProperties: false }),
    response: Type.Object(
      { data: Type.Array(CorrectionSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) },
      { title: 'CorrectionPage', additionalProperties: false },
    ),
    handle: (request) => corrections.list(tenantId(request), request.query),
  })

  // Configuration.
  declareRoute(app, {
    method: 'GET',
    url: '/attendance/shifts',
    config: access.read,
    tags,
    summary: 'List shifts',
    response: listOf(ShiftSchema, 'ShiftList'),
    handle: (request) => config.listShifts(tenantId(request)),
  })
  declareRoute(app, {
    method: 'POST',
    url: '/attendance/shifts',
    config: access.admin,
    tags,
    summary: 'Create a shift',
    body: ShiftInputSchema,
    status: 201,
    response: ShiftSchema,
    handle: (request) => config.createShift(tenantId(request), request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'GET',
    url: '/attendance/shifts/:code',
    config: access.read,
    tags,
    summary: 'Get a shift',
    params: ShiftParamsSchema,
    response: ShiftSchema,
    handle: (request) => config.getShift(tenantId(request), request.params.code),
  })
  declareRoute(app, {
    method: 'PATCH',
    url: '/attendance/shifts/:code',
    config: access.admin,
    tags,
    summary: 'Replace a shift’s times and windows',
    description: 'Applies to days computed from now on; recompute a range to apply it to days already made.',
    params: ShiftParamsSchema,
    body: ShiftInputSchema,
    response: ShiftSchema,
    handle: (request) =>
      config.updateShift(tenantId(request), request.params.code, request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'DELETE',
    url: '/attendance/shifts/:code',
    config: access.admin,
    tags,
    summary: 'Delete a shift that no assignment uses',
    params: ShiftParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await config.deleteShift(tenantId(request), request.params.code, actorOf(request))
      return null
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/policies',
    config: access.read,
    tags,
    summary: 'List attendance policies: the tenant’s and its groups’',
    response: listOf(PolicySchema, 'PolicyList'),
    handle: (request) => config.listPolicies(tenantId(request)),
  })
  declareRoute(app, {
    method: 'POST',
    url: '/attendance/policies',
    config: access.admin,
    tags,
    summary: 'Create the tenant’s policy (no group) or a group’s',
    body: PolicyInputSchema,
    status: 201,
    response: PolicySchema,
    handle: (request) => config.createPolicy(tenantId(request), request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'GET',
    url: '/attendance/policies/:id',
    config: access.read,
    tags,
    summary: 'Get a policy, with the effective settings',
    params: IdParamsSchema,
    response: PolicySchema,
    handle: (request) => config.getPolicy(tenantId(request), request.params.id),
  })
  declareRoute(app, {
    method: 'PATCH',
    url: '/attendance/policies/:id',
    config: access.admin,
    tags,
    summary: 'Replace what a policy sets',
    description: 'Fields left out are inherited again. Applies to days computed from now on.',
    params: IdParamsSchema,
    body: PolicyInputSchema,
    response: PolicySchema,
    handle: (request) =>
      config.updatePolicy(tenantId(request), request.params.id, request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'DELETE',
    url: '/attendance/policies/:id',
    config: access.admin,
    tags,
    summary: 'Delete a policy',
    params: IdParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await config.deletePolicy(tenantId(request), request.params.id, actorOf(request))
      return null
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/assignments',
    config: access.read,
    tags,
    summary: 'List shift assignments',
    querystring: Type.Object(
      { employeeCode: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' })) },
      { additionalProperties: false },
    ),
    response: listOf(AssignmentSchema, 'AssignmentList'),
    handle: (request) => config.listAssignments(tenantId(request), request.query.employeeCode),
  })
  declareRoute(app, {
    method: 'POST',
    url: '/attendance/assignments',
    config: access.admin,
    tags,
    summary: 'Assign a shift to an employee, a group or the tenant, from a date',
    body: AssignmentInputSchema,
    status: 201,
    response: AssignmentSchema,
    handle: (request) => config.createAssignment(tenantId(request), request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'DELETE',
    url: '/attendance/assignments/:id',
    config: access.admin,
    tags,
    summary: 'Delete a shift assignment',
    params: IdParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await config.deleteAssignment(tenantId(request), request.params.id, actorOf(request))
      return null
    },
  })

  declareRoute(app, {
    method: 'GET',
    url: '/attendance/holidays',
    config: access.read,
    tags,
    summary: 'List holidays',
    response: listOf(HolidaySchema, 'HolidayList'),
    handle: (request) => config.listHolidays(tenantId(request)),
  })
  declareRoute(app, {
    method: 'POST',
    url: '/attendance/holidays',
    config: access.admin,
    tags,
    summary: 'Add a holiday, for the tenant or a group',
    body: HolidayInputSchema,
    status: 201,
    response: HolidaySchema,
    handle: (request) => config.createHoliday(tenantId(request), request.body, actorOf(request)),
  })
  declareRoute(app, {
    method: 'DELETE',
    url: '/attendance/holidays/:id',
    config: access.admin,
    tags,
    summary: 'Delete a holiday',
    params: IdParamsSchema,
    status: 204,
    response: Type.Null(),
    handle: async (request) => {
      await config.deleteHoliday(tenantId(request), request.params.id, actorOf(request))
      return null
    },
  })
}
