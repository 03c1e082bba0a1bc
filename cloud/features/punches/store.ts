import type { Executor } from '../../db/executor.js'
import type { PunchesTable } from '../../db/schema.js'

export type PunchRow = PunchesTable

export interface PunchListFilter {
  employeeCode?: string
  /** µs, inclusive. */
  from?: number
  /** µs, exclusive. */
  to?: number
  after?: { punchedAt: number; id: string }
  limit: number
}

const CHUNK = 500

export class PunchStore {
  constructor(private readonly db: Executor) {}

  async get(tenantId: string, id: string): Promise<PunchRow | undefined> {
    return this.db
      .selectFrom('punches')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async findByExternalIds(tenantId: string, externalIds: readonly string[]): Promise<PunchRow[]> {
    const rows: PunchRow[] = []
    for (let i = 0; i < externalIds.length; i += CHUNK) {
      rows.push(
        ...(await this.db
          .selectFrom('punches')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('external_id', 'in', externalIds.slice(i, i + CHUNK))
          .execute()),
      )
    }
    return rows
  }

  /**
   * Inserts punches; one whose externalId is already stored (a concurrent retry won the race) is
   * skipped, not an error. Returns the ids actually inserted.
   */
  async insertMany(tenantId: string, rows: readonly Omit<PunchRow, 'tenant_id'>[]): Promise<Set<string>> {
    const inserted = new Set<string>()
    for (let i = 0; i < rows.length; i += CHUNK) {
      const result = await this.db
        .insertInto('punches')
        .values(rows.slice(i, i + CHUNK).map((r) => ({ ...r, tenant_id: tenantId })))
        .onConflict((oc) => oc.columns(['tenant_id', 'external_id']).doNothing())
        .returning('id')
        .execute()
      for (const { id } of result) inserted.add(id)
    }
    return inserted
  }

  async list(tenantId: string, filter: PunchListFilter): Promise<PunchRow[]> {
    let q = this.db.selectFrom('punches').selectAll().where('tenant_id', '=', tenantId)
    if (filter.employeeCode !== undefined) q = q.where('employee_code', '=', filter.employeeCode)
    if (filter.to !== undefined) q = q.where('punched_at', '<', filter.to)
    const after = filter.after
    // With a cursor, the cursor alone bounds the scan from below (it implies `from`): with a second,
    // scalar bound SQLite seeks from `from` and filters its way to the cursor, so late pages slow down.
    if (after)
      q = q.where((eb) => eb(eb.refTuple('punched_at', 'id'), '>', eb.tuple(after.punchedAt, after.id)))
    else if (filter.from !== undefined) q = q.where('punched_at', '>=', filter.from)
    return q.orderBy('punched_at').orderBy('id').limit(filter.limit).execute()
  }
}
