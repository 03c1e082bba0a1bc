import { type Static, Type } from '@sinclair/typebox'
import { PageQueryFields, PageSchema } from './pagination.js'
import { NO_CONTROL_CHARACTERS, NullableString, StringEnum } from './schema-helpers.js'

export const EMPLOYEE_STATUSES = ['ACTIVE', 'INACTIVE', 'TERMINATED'] as const
export type EmployeeStatus = (typeof EMPLOYEE_STATUSES)[number]

/**
 * Employee codes travel in URL paths and come from device PINs and payroll exports, so they are
 * kept to characters that need no escaping anywhere.
 */
export const EMPLOYEE_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'

export const EmployeeCodeSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: EMPLOYEE_CODE_PATTERN,
  description: "The tenant's own code for the employee (a device PIN or payroll number). Unique per tenant.",
  examples: ['E001'],
})

export const EmployeeStatusSchema = StringEnum(EMPLOYEE_STATUSES)

export const EmployeeSchema = Type.Object(
  {
    id: Type.String({ description: 'Hajri id (`emp_...`).' }),
    employeeCode: EmployeeCodeSchema,
    name: Type.String(),
    email: NullableString({ format: 'email' }),
    department: NullableString(),
    location: NullableString(),
    status: EmployeeStatusSchema,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({
      format: 'date-time',
      description: 'Server-assigned, strictly increasing within a tenant: every change has its own.',
    }),
  },
  { title: 'Employee', additionalProperties: false },
)

export type Employee = Static<typeof EmployeeSchema>

export const EmployeeListQuerySchema = Type.Object(
  {
    status: Type.Optional(EmployeeStatusSchema),
    ...PageQueryFields,
    updatedSince: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'Incremental sync: employees whose `updatedAt` is at or after this time, ordered by `updatedAt`. ' +
          'Store the last `updatedAt` you saw and pass it next time.',
      }),
    ),
  },
  { additionalProperties: false },
)

export type EmployeeListQuery = Static<typeof EmployeeListQuerySchema>

export const EmployeePageSchema = PageSchema(EmployeeSchema, 'EmployeePage')

export const EmployeeParamsSchema = Type.Object(
  { employeeCode: EmployeeCodeSchema },
  { additionalProperties: false },
)

/** An employee as administration writes it (CLI import now, console later). */
export const EmployeeInputSchema = Type.Object(
  {
    employeeCode: EmployeeCodeSchema,
    name: Type.String({ minLength: 1, maxLength: 200, pattern: NO_CONTROL_CHARACTERS }),
    email: NullableString({ format: 'email', maxLength: 254 }),
    department: NullableString({ maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    location: NullableString({ maxLength: 100, pattern: NO_CONTROL_CHARACTERS }),
    status: EmployeeStatusSchema,
  },
  { title: 'EmployeeInput', additionalProperties: false },
)

export type EmployeeInput = Static<typeof EmployeeInputSchema>
