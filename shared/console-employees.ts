import { type Static, Type } from '@sinclair/typebox'
import { EmployeeStatusSchema } from './employee.js'
import { PageQueryFields } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'

/** Longer than any code, email or name anyone types into a search box; bounds the work a search does. */
export const EMPLOYEE_SEARCH_MAX_LENGTH = 100

export const ConsoleEmployeeListQuerySchema = Type.Object(
  {
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: EMPLOYEE_SEARCH_MAX_LENGTH,
        pattern: NO_CONTROL_CHARACTERS,
        description:
          'Employees whose code, name or email starts with this, ignoring the case of A–Z ' +
          '(`ra` finds `Ravi Kumar`, `RA-07` and `rahul@acme.in`). Leading and trailing spaces are ignored.',
      }),
    ),
    status: Type.Optional(EmployeeStatusSchema),
    ...PageQueryFields,
  },
  { additionalProperties: false },
)

const IMPORT_OUTCOMES = ['created', 'updated', 'unchanged', 'failed'] as const

export const EmployeeImportLineSchema = Type.Object(
  {
    line: Type.Integer({ description: 'The line of the file (the header is line 1).' }),
    employeeCode: NullableString({ description: 'As the line gives it; null when it has none.' }),
    outcome: StringEnum(IMPORT_OUTCOMES),
    errors: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Why a failed line was not imported, one entry per problem.',
      }),
    ),
  },
  { title: 'EmployeeImportLine', additionalProperties: false },
)

export type EmployeeImportLine = Static<typeof EmployeeImportLineSchema>

export const EmployeeImportReportSchema = Type.Object(
  {
    summary: Type.Object(
      {
        created: Type.Integer(),
        updated: Type.Integer(),
        unchanged: Type.Integer(),
        failed: Type.Integer(),
      },
      { additionalProperties: false },
    ),
    lines: Type.Array(EmployeeImportLineSchema, {
      description: 'Every line after the header, in file order.',
    }),
  },
  { title: 'EmployeeImportReport', additionalProperties: false },
)

export type EmployeeImportReport = Static<typeof EmployeeImportReportSchema>

export const EMPLOYEE_CSV_MEDIA_TYPE = 'text/csv'
