import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import {
  ConsoleEmployeeListQuerySchema,
  EMPLOYEE_CSV_MEDIA_TYPE,
  EmployeeImportReportSchema,
} from '../../../shared/console-employees.js'
import { EmployeePageSchema } from '../../../shared/employee.js'
import { AppError } from '../../app-error.js'
import { declareRoute } from '../../http/declare-route.js'
import { EMPLOYEE_CSV_COLUMNS } from './employee-csv.js'
import { declareEmployeeByCode } from './routes.js'
import { type EmployeeService, MAX_IMPORT_LINES } from './service.js'

const TAGS = ['Employees (console API)']

/**
 * The employee directory as a tenant's admin sees it, under /api/console/v1: search
 * (docs/decisions/0048-employee-prefix-search.md),
 * look up, and import the CLI's CSV format with a report for each line.
 */
export const employeeConsoleRoutes: FastifyPluginAsyncTypebox<{ employees: EmployeeService }> = async (
  app,
  { employees },
) => {
  declareRoute(app, {
    method: 'GET',
    url: '/employees',
    config: { access: 'read' },
    tags: TAGS,
    summary: 'List or search employees',
    description:
      'Every employee once, in a stable order (by id), even while records change. `search` finds ' +
      'those whose code, name or email starts with it, ignoring the case of A–Z.',
    querystring: ConsoleEmployeeListQuerySchema,
    response: EmployeePageSchema,
    handle: (request) => employees.list(request.console.tenant.id, request.query),
  })

  declareEmployeeByCode(app, { access: 'read' }, TAGS, (request) =>
    employees.get(request.console.tenant.id, request.params.employeeCode),
  )

  // Its own scope, so that only this route reads CSV, and reads nothing else.
  await app.register(async (csv) => {
    csv.removeAllContentTypeParsers()
    csv.addContentTypeParser(EMPLOYEE_CSV_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    )
    // Read (up to the body limit) and refused: JSON here is a mistake, and the app-wide answer to
    // an unknown media type would ask for JSON.
    csv.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, _body, done) =>
      done(new AppError('unsupported_media_type', `Send the file as ${EMPLOYEE_CSV_MEDIA_TYPE}.`), undefined),
    )

    csv.withTypeProvider<TypeBoxTypeProvider>().post(
      '/employees/import',
      {
        config: { access: 'write' },
        schema: {
          tags: TAGS,
          summary: 'Import employees from a CSV file',
          description:
            `The body is the file, as \`${EMPLOYEE_CSV_MEDIA_TYPE}\` (UTF-8), in the CLI's format: a header ` +
            `naming the columns (${EMPLOYEE_CSV_COLUMNS.join(', ')}; employeeCode and name required), then ` +
            'one employee a line, matched by employeeCode. A wrong header refuses the file (`invalid_csv`, ' +
            'nothing imported). A bad line is reported and left out; the good lines are saved together, ' +
            'in one transaction. Each line after the header has its outcome in the report. A file over ' +
            `the body limit is refused (413 \`payload_too_large\`), as is one of more than ${MAX_IMPORT_LINES} lines ` +
            '(`invalid_csv`); another media type is a 415 (`unsupported_media_type`).',
          consumes: [EMPLOYEE_CSV_MEDIA_TYPE],
          body: Type.String({ description: 'The CSV file.' }),
          response: { 200: EmployeeImportReportSchema },
        },
      },
      async (request) => employees.importCsv(request.console.tenant.id, request.body),
    )
  })
}
