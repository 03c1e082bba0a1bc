import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyContextConfig, FastifyRequest } from 'fastify'
import {
  EmployeeListQuerySchema,
  EmployeePageSchema,
  EmployeeParamsSchema,
  EmployeeSchema,
} from '../../../shared/employee.js'
import { declareRoute, type RouteHost } from '../../http/declare-route.js'
import type { EmployeeService } from './service.js'

/**
 * GET /employees/:employeeCode, the same in the public API and in the console's: only who may call it,
 * and so where its tenant comes from, differ.
 */
export function declareEmployeeByCode(
  app: RouteHost,
  config: FastifyContextConfig,
  tags: string[],
  employees: EmployeeService,
  tenantIdOf: (request: FastifyRequest) => string,
): void {
  declareRoute(app, {
    method: 'GET',
    url: '/employees/:employeeCode',
    config,
    tags,
    summary: 'Get one employee by employee code',
    params: EmployeeParamsSchema,
    response: EmployeeSchema,
    handle: (request) => employees.get(tenantIdOf(request), request.params.employeeCode),
  })
}

export const employeeRoutes: FastifyPluginAsyncTypebox<{ service: EmployeeService }> = async (
  app,
  { service },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/employees',
    config: { scope: 'employees:read' },
    tags: ['Employees'],
    summary: "List the tenant's employees",
    description:
      'Without `updatedSince`: every employee once, in a stable order, even while records change. ' +
      'With `updatedSince`: employees changed at or after that time, oldest change first; a record ' +
      'changed while you page comes again, with its new version, before the end.',
    querystring: EmployeeListQuerySchema,
    response: EmployeePageSchema,
    handle: (request) => service.list(request.auth.tenant.id, request.query),
  })

  declareEmployeeByCode(
    app,
    { scope: 'employees:read' },
    ['Employees'],
    service,
    (request) => request.auth.tenant.id,
  )
}
