import type { Kysely } from 'kysely'
import {
  EMPLOYEE_STATUSES,
  type Employee,
  type EmployeeInput,
  type EmployeeListQuery,
} from '../../../shared/employee.js'
import { newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { formatServerTime, nowMicros, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import { assertSameFilter, decodeCursor, encodeCursor } from '../../cursor.js'
import type { Database } from '../../db/schema.js'
import { TenantStore } from '../tenants/store.js'
import { type EmployeePosition, type EmployeeRow, EmployeeStore } from './store.js'

export interface EmployeePage {
  data: Employee[]
  nextCursor: string | null
}

export interface UpsertSummary {
  created: number
  updated: number
  unchanged: number
}

/** What a cursor carries: the filters it was made for and the last position returned. */
interface EmployeeCursor {
  status: string | undefined
  updatedSince: number | undefined
  after: EmployeePosition
}

const EMPLOYEE_ID = /^emp_[0-9A-HJKMNP-TV-Z]{26}$/

// Every field is checked against what we put in: a cursor's values reach SQL, and PostgreSQL
// refuses some strings (NUL) with an error rather than an empty result (found by fuzzing).
function readCursor(v: Record<string, unknown>): EmployeeCursor | undefined {
  const { s, u, k } = v
  if (s !== undefined && !(EMPLOYEE_STATUSES as readonly unknown[]).includes(s)) return undefined
  if (u !== undefined && !Number.isSafeInteger(u)) return undefined
  if (!Array.isArray(k)) return undefined
  const id = k.at(-1)
  if (typeof id !== 'string' || !EMPLOYEE_ID.test(id)) return undefined
  const status = s as string | undefined
  if (u === undefined) return k.length === 1 ? { status, updatedSince: undefined, after: { id } } : undefined
  if (k.length !== 2 || !Number.isSafeInteger(k[0])) return undefined
  return { status, updatedSince: u as number, after: { updatedAt: k[0] as number, id } }
}

export function toEmployee(row: EmployeeRow): Employee {
  return {
    id: row.id,
    employeeCode: row.employee_code,
    name: row.name,
    email: row.email,
    department: row.department,
    location: row.location,
    status: row.status as Employee['status'],
    createdAt: formatServerTime(row.created_at),
    updatedAt: formatServerTime(row.updated_at),
  }
}

function sameEmployee(row: EmployeeRow, input: EmployeeInput): boolean {
  return (
    row.name === input.name &&
    row.email === input.email &&
    row.department === input.department &&
    row.location === input.location &&
    row.status === input.status
  )
}

export class EmployeeService {
  constructor(private readonly deps: { db: Kysely<Database>; now?: () => number }) {}

  async list(tenantId: string, query: EmployeeListQuery): Promise<EmployeePage> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let status = query.status as string | undefined
    let updatedSince = query.updatedSince === undefined ? undefined : parseTimestamp(query.updatedSince)
    let after: EmployeePosition | undefined
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, readCursor)
      assertSameFilter('status', status, cursor.status)
      assertSameFilter('updatedSince', updatedSince, cursor.updatedSince)
      status = cursor.status
      updatedSince = cursor.updatedSince
      after = cursor.after
    }
    // One row more than asked tells whether there is a next page without a count query.
    const rows = await new EmployeeStore(this.deps.db).list(tenantId, {
      status,
      updatedSince,
      after,
      limit: limit + 1,
    })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    let nextCursor: string | null = null
    if (rows.length > limit && last) {
      nextCursor = encodeCursor({
        s: status,
        u: updatedSince,
        k: updatedSince === undefined ? [last.id] : [last.updated_at, last.id],
      })
    }
    return { data: page.map(toEmployee), nextCursor }
  }

  async get(tenantId: string, employeeCode: string): Promise<Employee> {
    const row = await new EmployeeStore(this.deps.db).getByCode(tenantId, employeeCode)
    if (!row) throw new AppError('employee_not_found', `No employee with code ${employeeCode}.`)
    return toEmployee(row)
  }

  /**
   * Creates or updates employees by employeeCode, in one transaction. Rows that would not change
   * are left alone, so a re-import does not make every employee look changed to syncing clients.
   */
  async upsert(tenantId: string, inputs: readonly EmployeeInput[]): Promise<UpsertSummary> {
    const now = this.deps.now?.() ?? nowMicros()
    return this.deps.db.transaction().execute(async (trx) => {
      const tenants = new TenantStore(trx)
      if (!(await tenants.get(tenantId))) throw new AppError('tenant_not_found', `No tenant ${tenantId}.`)
      const store = new EmployeeStore(trx)
      const existing = new Map(
        (
          await store.findByCodes(
            tenantId,
            inputs.map((i) => i.employeeCode),
          )
        ).map((r) => [r.employee_code, r]),
      )
      const toCreate: EmployeeInput[] = []
      const toUpdate: { row: EmployeeRow; input: EmployeeInput }[] = []
      for (const input of inputs) {
        const row = existing.get(input.employeeCode)
        if (!row) toCreate.push(input)
        else if (!sameEmployee(row, input)) toUpdate.push({ row, input })
      }
      const changes = toCreate.length + toUpdate.length
      if (changes === 0) return { created: 0, updated: 0, unchanged: inputs.length }
      let at = await tenants.reserveChangeTimes(tenantId, changes, now)
      await store.insertMany(
        tenantId,
        toCreate.map((input) => {
          const time = at++
          return { id: newId('employee'), ...toColumns(input), created_at: time, updated_at: time }
        }),
      )
      for (const { row, input } of toUpdate) await store.update(tenantId, row.id, input, at++)
      return { created: toCreate.length, updated: toUpdate.length, unchanged: inputs.length - changes }
    })
  }
}

function toColumns(input: EmployeeInput) {
  return {
    employee_code: input.employeeCode,
    name: input.name,
    email: input.email,
    department: input.department,
    location: input.location,
    status: input.status,
  }
}
