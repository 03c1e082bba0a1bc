import {
  EMPLOYEE_SEARCH_MAX_LENGTH,
  type EmployeeImportLine,
  type EmployeeImportReport,
} from '../../../shared/console-employees.js'
import {
  EMPLOYEE_STATUSES,
  type Employee,
  type EmployeeInput,
  type EmployeeListQuery,
} from '../../../shared/employee.js'
import { isId, newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { NO_CONTROL_CHARACTERS } from '../../../shared/schema-helpers.js'
import { formatServerTime, nowMicros, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { LiveCredentialCheck } from '../../auth/auth-context.js'
import { assertSameFilter, decodeCursor, readPage } from '../../cursor.js'
import type { LiveCredentialAt } from '../../db/live-credential.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { TenantStore } from '../tenants/store.js'
import type { EmittedEvent, WebhookOutbox } from '../webhooks/outbox.js'
import type { OutboxStore } from '../webhooks/outbox-store.js'
import { CsvFormatError, type ParsedEmployeeCsv, parseEmployeeCsv } from './employee-csv.js'
import { normalizeSearch } from './employee-search.js'
import { type EmployeePosition, type EmployeeRow, type EmployeeStore, employeeColumns } from './store.js'

/** The stores employees use. */
export interface EmployeeStores {
  tenants: Pick<TenantStore, 'get' | 'reserveChangeTimes'>
  employees: EmployeeStore
  outbox: OutboxStore
}

export interface EmployeePage {
  data: Employee[]
  nextCursor: string | null
}

export interface UpsertSummary {
  created: number
  updated: number
  unchanged: number
}

/** What happened to one employee of an upsert. */
export type UpsertOutcome = 'created' | 'updated' | 'unchanged'

/**
 * The most data lines one CSV import takes: a large factory's roll, in one transaction, with a
 * report line each. It bounds what a request of the body limit can make us write and answer.
 */
export const MAX_IMPORT_LINES = 50_000

/** What a cursor carries: the filters it was made for and the last position returned. */
interface EmployeeCursor {
  status: string | undefined
  updatedSince: number | undefined
  search: string | undefined
  after: EmployeePosition
}

const PLAIN_TEXT = new RegExp(NO_CONTROL_CHARACTERS)

/** A normalized search, bounded as the query schema bounds it (in code points, as JSON Schema counts). */
function isSearch(q: unknown): q is string {
  return (
    typeof q === 'string' &&
    PLAIN_TEXT.test(q) &&
    q.length > 0 &&
    [...q].length <= EMPLOYEE_SEARCH_MAX_LENGTH &&
    normalizeSearch(q) === q
  )
}

// Every field is checked against what we put in: a cursor's values reach SQL, and PostgreSQL
// refuses some strings (NUL) with an error rather than an empty result (found by fuzzing).
function readCursor(v: Record<string, unknown>): EmployeeCursor | undefined {
  const { s, u, q, k } = v
  if (s !== undefined && !(EMPLOYEE_STATUSES as readonly unknown[]).includes(s)) return undefined
  if (u !== undefined && !Number.isSafeInteger(u)) return undefined
  if (q !== undefined && !isSearch(q)) return undefined
  if (!Array.isArray(k)) return undefined
  const id = k.at(-1)
  if (!isId('employee', id)) return undefined
  const status = s as string | undefined
  const search = q as string | undefined
  if (u === undefined)
    return k.length === 1 ? { status, updatedSince: undefined, search, after: { id } } : undefined
  if (k.length !== 2 || !Number.isSafeInteger(k[0])) return undefined
  return { status, updatedSince: u as number, search, after: { updatedAt: k[0] as number, id } }
}

function toEmployee(row: EmployeeRow): Employee {
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
  constructor(
    private readonly deps: { stores: UnitOfWork<EmployeeStores>; outbox: WebhookOutbox; now?: () => number },
  ) {}

  private now(): number {
    return this.deps.now?.() ?? nowMicros()
  }

  /** A page of employees; `search` (the console's) narrows to codes, names and emails starting with it. */
  async list(
    tenantId: string,
    query: EmployeeListQuery & { search?: string | undefined },
  ): Promise<EmployeePage> {
    return this.readPage(tenantId, query)
  }

  /**
   * `list` for a caller whose credential came from the cache, checked by the page's own statement:
   * undefined when that finds nothing (an empty page, or the credential no longer live), and the
   * caller looks its credential up, then calls `list`
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  async listForCachedCaller(
    tenantId: string,
    query: EmployeeListQuery,
    caller: LiveCredentialCheck,
  ): Promise<EmployeePage | undefined> {
    const page = await this.readPage(tenantId, query, { ...caller, now: this.now() })
    return page.data.length > 0 ? page : undefined
  }

  private async readPage(
    tenantId: string,
    query: EmployeeListQuery & { search?: string | undefined },
    liveCredential?: LiveCredentialAt,
  ): Promise<EmployeePage> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let status = query.status as string | undefined
    let updatedSince = query.updatedSince === undefined ? undefined : parseTimestamp(query.updatedSince)
    let search = normalizeSearch(query.search)
    let after: EmployeePosition | undefined
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, readCursor)
      assertSameFilter('status', status, cursor.status)
      assertSameFilter('updatedSince', updatedSince, cursor.updatedSince)
      assertSameFilter('search', search, cursor.search)
      status = cursor.status
      updatedSince = cursor.updatedSince
      search = cursor.search
      after = cursor.after
    }
    const { rows, nextCursor } = await readPage(
      limit,
      (n) =>
        this.deps.stores.read.employees.list(tenantId, {
          status,
          updatedSince,
          search,
          after,
          limit: n,
          ...(liveCredential && { liveCredential }),
        }),
      (last) => ({
        s: status,
        u: updatedSince,
        q: search,
        k: updatedSince === undefined ? [last.id] : [last.updated_at, last.id],
      }),
    )
    return { data: rows.map(toEmployee), nextCursor }
  }

  async get(tenantId: string, employeeCode: string): Promise<Employee> {
    const row = await this.deps.stores.read.employees.getByCode(tenantId, employeeCode)
    if (!row) throw new AppError('employee_not_found', `No employee with code ${employeeCode}.`)
    return toEmployee(row)
  }

  /**
   * `get` for a caller whose credential came from the cache, checked by the read's own statement:
   * undefined when that finds nothing (no such employee, or the credential no longer live), and the
   * caller looks its credential up, then calls `get`
   * (docs/decisions/0094-reads-check-a-cached-credential.md).
   */
  async getForCachedCaller(
    tenantId: string,
    employeeCode: string,
    caller: LiveCredentialCheck,
  ): Promise<Employee | undefined> {
    const row = await this.deps.stores.read.employees.getByCodeIfLive(tenantId, employeeCode, {
      ...caller,
      now: this.now(),
    })
    return row && toEmployee(row)
  }

  /**
   * Creates or updates employees by employeeCode, in one transaction. Rows that would not change
   * are left alone, so a re-import does not make every employee look changed to syncing clients.
   */
  async upsert(tenantId: string, inputs: readonly EmployeeInput[]): Promise<UpsertSummary> {
    const outcomes = await this.upsertEach(tenantId, inputs)
    const count = (outcome: UpsertOutcome) => outcomes.filter((o) => o === outcome).length
    return { created: count('created'), updated: count('updated'), unchanged: count('unchanged') }
  }

  /**
   * An employee CSV (the CLI's format) imported as the CLI imports it: a wrong header refuses the
   * file; a bad line is reported and left out; the good lines are saved together, in one
   * transaction (all of them, or none if the database fails). Every line gets its outcome.
   */
  async importCsv(tenantId: string, text: string): Promise<EmployeeImportReport> {
    let parsed: ParsedEmployeeCsv
    try {
      parsed = parseEmployeeCsv(text)
    } catch (err) {
      if (err instanceof CsvFormatError)
        throw new AppError('invalid_csv', `Nothing was imported: ${err.message.replace(/\.$/, '')}.`)
      throw err
    }
    const total = parsed.rows.length + parsed.rejected.length
    if (total > MAX_IMPORT_LINES) {
      throw new AppError(
        'invalid_csv',
        `Nothing was imported: the file has ${total} lines after the header, more than the ${MAX_IMPORT_LINES} one import takes. Split it.`,
      )
    }
    const outcomes = await this.upsertEach(
      tenantId,
      parsed.rows.map((r) => r.input),
    )
    const lines: EmployeeImportLine[] = [
      ...parsed.rows.map((r, i) => ({
        line: r.line,
        employeeCode: r.input.employeeCode,
        outcome: outcomes[i] ?? 'unchanged',
      })),
      ...parsed.rejected.map((r) => ({
        line: r.line,
        employeeCode: r.employeeCode,
        outcome: 'failed' as const,
        errors: r.errors,
      })),
    ].sort((a, b) => a.line - b.line)
    const count = (outcome: EmployeeImportLine['outcome']) =>
      lines.filter((l) => l.outcome === outcome).length
    return {
      summary: {
        created: count('created'),
        updated: count('updated'),
        unchanged: count('unchanged'),
        failed: count('failed'),
      },
      lines,
    }
  }

  /** As {@link upsert}, telling what happened to each input, in their order. */
  async upsertEach(tenantId: string, inputs: readonly EmployeeInput[]): Promise<UpsertOutcome[]> {
    const requestedAtMicros = this.now()
    const outcomes = await this.deps.stores.transaction(async (s) => {
      if (!(await s.tenants.get(tenantId))) throw new AppError('tenant_not_found', `No tenant ${tenantId}.`)
      const existing = new Map(
        (
          await s.employees.findByCodes(
            tenantId,
            inputs.map((i) => i.employeeCode),
          )
        ).map((r) => [r.employee_code, r]),
      )
      const toCreate: EmployeeInput[] = []
      const toUpdate: { row: EmployeeRow; input: EmployeeInput }[] = []
      const outcomes: UpsertOutcome[] = []
      for (const input of inputs) {
        const row = existing.get(input.employeeCode)
        if (!row) {
          toCreate.push(input)
          outcomes.push('created')
        } else if (!sameEmployee(row, input)) {
          toUpdate.push({ row, input })
          outcomes.push('updated')
        } else outcomes.push('unchanged')
      }
      const changes = toCreate.length + toUpdate.length
      if (changes === 0) return outcomes
      let nextChangeMicros = await s.tenants.reserveChangeTimes(tenantId, changes, requestedAtMicros)
      const created = toCreate.map((input) => {
        const changedAtMicros = nextChangeMicros++
        return {
          id: newId('employee'),
          tenant_id: tenantId,
          ...employeeColumns(input),
          created_at: changedAtMicros,
          updated_at: changedAtMicros,
        }
      })
      await s.employees.insertMany(
        tenantId,
        created.map(({ tenant_id: _, ...row }) => row),
      )
      const events: EmittedEvent[] = created.map((row) => ({
        type: 'employee.created',
        data: toEmployee(row),
      }))
      for (const { row, input } of toUpdate) {
        const changedAtMicros = nextChangeMicros++
        await s.employees.update(tenantId, row.id, input, changedAtMicros)
        events.push({
          type: 'employee.updated',
          data: toEmployee({ ...row, ...employeeColumns(input), updated_at: changedAtMicros }),
        })
      }
      // In the same transaction as the change (the outbox, docs/decisions/0020-webhook-outbox.md): an HR
      // system hears of every change once.
      await this.deps.outbox.emit(s.outbox, tenantId, events)
      return outcomes
    })
    if (outcomes.some((o) => o !== 'unchanged')) this.deps.outbox.committed()
    return outcomes
  }
}
