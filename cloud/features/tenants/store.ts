import { sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import type { TenantsTable } from '../../db/schema.js'

export class TenantStore {
  constructor(private readonly db: Executor) {}

  async insert(row: Omit<TenantsTable, 'last_change_us'>): Promise<void> {
    await this.db
      .insertInto('tenants')
      .values({ ...row, last_change_us: 0 })
      .execute()
  }

  async get(tenantId: string): Promise<TenantsTable | undefined> {
    return this.db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst()
  }

  /**
   * Hands out `count` consecutive change times (µs), each later than every one given before in this
   * tenant and not before `now`. The UPDATE locks the tenant row until the caller's transaction ends,
   * so change times are assigned in commit order and a sync by `updatedAt` cannot pass over a change
   * that commits late (docs/decisions/0009-incremental-sync.md). Must run inside that transaction.
   */
  async reserveChangeTimes(tenantId: string, count: number, now: number): Promise<number> {
    const row = await this.db
      .updateTable('tenants')
      .set({
        last_change_us: sql<number>`case when last_change_us + 1 > ${now} then last_change_us + ${count} else ${now + count - 1} end`,
      })
      .where('id', '=', tenantId)
      .returning('last_change_us')
      .executeTakeFirstOrThrow()
    return row.last_change_us - count + 1
  }

  /** Every tenant's id and zone, for work done per tenant in the background. */
  listZones(): Promise<Pick<TenantsTable, 'id' | 'time_zone'>[]> {
    return this.db.selectFrom('tenants').select(['id', 'time_zone']).orderBy('id').execute()
  }
}
