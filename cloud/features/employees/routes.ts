import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  EmployeeListQuerySchema,
  EmployeePageSchema,
  EmployeeParamsSchema,
  EmployeeSchema,
} from '../../../shared/employee.js'
import type { EmployeeService } from './service.js'

export const employeeRoutes: FastifyPluginAsyncTypebox<{ service: EmployeeService }> = async (
  app,
  { service },
) => {
  app.get(
    '/employees',
    {
      config: { scope: 'employees:read' },
      schema: {
        tags: ['Employees'],
        summary: "List the tenant's employees",
        description:
          'Without `updatedSince`: every employee once, in a stable order, even while records change. ' +
          'With `updatedSince`: employees changed at or after that time, oldest change first; a record ' +
          'changed while you page comes again, with its new version, before the end.',
        querystring: EmployeeListQuerySchema,
        response: { 200: EmployeePageSchema },
      },
    },
    async (request) => service.list(request.auth.tenant.id, request.query),
  )

  app.get(
    '/employees/:employeeCode',
    {
      config: { scope: 'employees:read' },
      schema: {
        tags: ['Employees'],
        summary: 'Get one employee by employee code',
        params: EmployeeParamsSchema,
        response: { 200: EmployeeSchema },
      },
    },
    async (request) => service.get(request.auth.tenant.id, request.params.employeeCode),
  )
}
