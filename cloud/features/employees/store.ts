import { sql } from 'kysely'
import type { EmployeeInput } from '../../../shared/employee.js'
import type { Executor } from '../../db/executor.js'
import { type LiveCredentialAt, liveCredential, prepareForCachedCaller } from '../../db/live-credential.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { EmployeesTable } from '../../db/schema.js'
import { prefixEnd } from './employee-search.js'

export type EmployeeRow = EmployeesTable

// A single punch's employee: built and compiled once (see prepareQuery).
const findByCode = prepareQuery(
  (db, tenantId: string, code: string) =>
    db
      .selectFrom('employees')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', code),
  ['tenant_id', 'employee_code'],
)

// An employee read for a cached caller, whose credential the same statement checks: built and
// compiled once for each kind of credential (see prepareForCachedCaller).
const getByCodeIfLive = prepareForCachedCaller(
  (db, caller, tenantId: string, code: string) =>
    db
      .selectFrom('employees')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', code)
      .where(sql<boolean>`exists (${liveCredential(sql.ref('employees.tenant_id'), caller)})`),
  ['tenant_id', 'employee_code'],
)

/** An employee's input as the columns that hold it. */
export function employeeColumns(input: EmployeeInput) {
  return {
    employee_code: input.employeeCode,
    name: input.name,
    email: input.email,
    department: input.department,
    location: input.location,
    status: input.status,
  }
}

/** Where a page starts: after this id (full listing) or after this (updated_at, id) (sync). */
export type EmployeePosition = { id: string } | { updatedAt: number; id: string }

export interface EmployeeListFilter {
  status?: string
  /** Normalized (see employee-search.ts): the start of the code, name or email, A–Z folded. */
  search?: string
  /** Sync mode: only rows with updated_at at or after this, ordered by (updated_at, id). */
  updatedSince?: number
  after?: EmployeePosition
  limit: number
  /**
   * A cached caller the same statement checks: no rows unless its credential is still live
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  liveCredential?: LiveCredentialAt
}

// Bound parameters per statement stay far below SQLite's 32,766 and PostgreSQL's 65,535.
const CHUNK = 500

const SEARCHED_COLUMNS = ['employee_code', 'name', 'email'] as const

export class EmployeeStore {
  constructor(private readonly db: Executor) {}

  async list(tenantId: string, filter: EmployeeListFilter): Promise<EmployeeRow[]> {
    let q = this.db.selectFrom('employees').selectAll().where('tenant_id', '=', tenantId)
    const caller = filter.liveCredential
    if (caller) q = q.where(sql<boolean>`exists (${liveCredential(tenantId, caller)})`)
    if (filter.status !== undefined) q = q.where('status', '=', filter.status)
    const search = filter.search
    if (search !== undefined) {
      const end = prefixEnd(search)
      // The same expressions as the indexes of migration 0006, so that either database may use them.
      q = q.where((eb) =>
        eb.or(
          SEARCHED_COLUMNS.map((column) => {
            const folded = sql<string>`lower(${sql.ref(column)})`
            return end === undefined
              ? eb(folded, '>=', search)
              : eb.and([eb(folded, '>=', search), eb(folded, '<', end)])
          }),
        ),
      )
    }
    const after = filter.after
    if (filter.updatedSince !== undefined) {
      if (after && 'updatedAt' in after) {
        // The cursor alone bounds the scan (it implies updatedSince): with a second, scalar bound
        // SQLite seeks from updatedSince and filters its way to the cursor, so late pages slow down.
        q = q.where((eb) => eb(eb.refTuple('updated_at', 'id'), '>', eb.tuple(after.updatedAt, after.id)))
      } else q = q.where('updated_at', '>=', filter.updatedSince)
      q = q.orderBy('updated_at').orderBy('id')
    } else {
      // Ordered by id, which never changes: a full listing returns every employee exactly once even
      // while they are being updated (an order by updated_at would move them under the reader).
      if (after) q = q.where('id', '>', after.id)
      q = q.orderBy('id')
    }
    return q.limit(filter.limit).execute()
  }

  async getByCode(tenantId: string, employeeCode: string): Promise<EmployeeRow | undefined> {
    return this.db
      .selectFrom('employees')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('employee_code', '=', employeeCode)
      .executeTakeFirst()
  }

  /**
   * The employee, only while the cached caller's credential is live: undefined when there is no
   * such employee or the credential is no longer live, which the caller tells apart by looking the
   * credential up (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  async getByCodeIfLive(
    tenantId: string,
    employeeCode: string,
    caller: LiveCredentialAt,
  ): Promise<EmployeeRow | undefined> {
    const [row] = await getByCodeIfLive(this.db, caller, tenantId, employeeCode)
    return row
  }

  async findByCodes(tenantId: string, codes: readonly string[]): Promise<EmployeeRow[]> {
    if (codes.length === 1 && codes[0] !== undefined) return findByCode(this.db, tenantId, codes[0])
    const rows: EmployeeRow[] = []
    for (let i = 0; i < codes.length; i += CHUNK) {
      const chunk = codes.slice(i, i + CHUNK)
      rows.push(
        ...(await this.db
          .selectFrom('employees')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('employee_code', 'in', chunk)
          .execute()),
      )
    }
    return rows
  }

  async insertMany(tenantId: string, rows: Omit<EmployeeRow, 'tenant_id'>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      await this.db
        .insertInto('employees')
        .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, tenant_id: tenantId })))
        .execute()
    }
  }

  /** The employee found by its code takes the input's other fields (its code stays). */
  async update(tenantId: string, id: string, input: EmployeeInput, updatedAtMicros: number): Promise<void> {
    const { employee_code: _, ...columns } = employeeColumns(input)
    await this.db
      .updateTable('employees')
      .set({ ...columns, updated_at: updatedAtMicros })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  /** Employee codes in code order after `after`, optionally of one status: for work over a tenant's roll. */
  async codesAfter(
    tenantId: string,
    after: string | null,
    limit: number,
    status?: string,
  ): Promise<string[]> {
    let q = this.db.selectFrom('employees').select('employee_code').where('tenant_id', '=', tenantId)
    if (after !== null) q = q.where('employee_code', '>', after)
    if (status !== undefined) q = q.where('status', '=', status)
    const rows = await q.orderBy('employee_code').limit(limit).execute()
    return rows.map((r) => r.employee_code)
  }

  async count(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('employees')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
