import type { FastifyPluginAsyncTypebox, Static } from '@fastify/type-provider-typebox'
import type { FastifyContextConfig, FastifyRequest } from 'fastify'
import {
  type Employee,
  EmployeeListQuerySchema,
  EmployeePageSchema,
  EmployeeParamsSchema,
  EmployeeSchema,
} from '../../../shared/employee.js'
import { declareRoute, type RouteHost } from '../../http/declare-route.js'
import { readForCachedCaller } from '../../http/read-for-cached-caller.js'
import type { EmployeeService } from './service.js'

type EmployeeParams = Static<typeof EmployeeParamsSchema>

/**
 * GET /employees/:employeeCode, the same in the public API and in the console's: only who may call it,
 * and so where its tenant comes from, differ.
 */
export function declareEmployeeByCode(
  app: RouteHost,
  config: FastifyContextConfig,
  tags: string[],
  get: (request: FastifyRequest<{ Params: EmployeeParams }>) => Promise<Employee>,
): void {
  declareRoute(app, {
    method: 'GET',
    url: '/employees/:employeeCode',
    config,
    tags,
    summary: 'Get one employee by employee code',
    params: EmployeeParamsSchema,
    response: EmployeeSchema,
    handle: get,
  })
}

export const employeeRoutes: FastifyPluginAsyncTypebox<{ service: EmployeeService }> = async (
  app,
  { service },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/employees',
    // The credential may come from the cache: the page's statement checks it.
    config: { scope: 'employees:read', liveCredentialCheckedByRead: true },
    tags: ['Employees'],
    summary: "List the tenant's employees",
    description:
      'Without `updatedSince`: every employee once, in a stable order, even while records change. ' +
      'With `updatedSince`: employees changed at or after that time, oldest change first; a record ' +
      'changed while you page comes again, with its new version, before the end.',
    querystring: EmployeeListQuerySchema,
    response: EmployeePageSchema,
    handle: (request) =>
      readForCachedCaller(
        request,
        (caller) => service.listForCachedCaller(request.auth.tenant.id, request.query, caller),
        () => service.list(request.auth.tenant.id, request.query),
      ),
  })

  // The credential may come from the cache: the read's statement checks it.
  declareEmployeeByCode(
    app,
    { scope: 'employees:read', liveCredentialCheckedByRead: true },
    ['Employees'],
    (request) =>
      readForCachedCaller(
        request,
        (caller) => service.getForCachedCaller(request.auth.tenant.id, request.params.employeeCode, caller),
        () => service.get(request.auth.tenant.id, request.params.employeeCode),
      ),
  )
}
