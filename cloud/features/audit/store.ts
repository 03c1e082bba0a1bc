import type { Kysely, Transaction } from 'kysely'
import type { AuditLogTable, Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

export type AuditRow = AuditLogTable

/** The audit log: insert and read, nothing else (the database refuses updates and deletes too). */
export class AuditStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<AuditRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  /** Newest first. */
  async list(
    tenantId: string,
    filter: { action?: string; targetId?: string; beforeId?: string; limit: number },
  ): Promise<AuditRow[]> {
    let q = this.db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId)
    if (filter.action !== undefined) q = q.where('action', '=', filter.action)
    if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId)
    if (filter.beforeId !== undefined) q = q.where('id', '<', filter.beforeId)
    return q.orderBy('id', 'desc').limit(filter.limit).execute()
  }
}
