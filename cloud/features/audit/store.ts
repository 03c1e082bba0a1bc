import type { Executor } from '../../db/executor.js'
import type { AuditLogTable } from '../../db/schema.js'

export type AuditRow = AuditLogTable

/** What the log can be narrowed to; times in µs, `from` inclusive, `to` exclusive. */
export interface AuditFilter {
  action: string | undefined
  actor: string | undefined
  targetType: string | undefined
  targetId: string | undefined
  from: number | undefined
  to: number | undefined
}

/** The audit log: insert and read, nothing else (the database refuses updates and deletes too). */
export class AuditStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<AuditRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  /**
   * Newest first (ids sort by creation). A target id has its own index; the other filters narrow a
   * walk of the tenant's log from the newest entry, which stops at the page's end.
   */
  async list(
    tenantId: string,
    filter: Partial<AuditFilter> & { beforeId?: string | undefined; limit: number },
  ): Promise<AuditRow[]> {
    let q = this.db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId)
    if (filter.action !== undefined) q = q.where('action', '=', filter.action)
    if (filter.actor !== undefined) q = q.where('actor', '=', filter.actor)
    if (filter.targetType !== undefined) q = q.where('target_type', '=', filter.targetType)
    if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId)
    if (filter.from !== undefined) q = q.where('occurred_at', '>=', filter.from)
    if (filter.to !== undefined) q = q.where('occurred_at', '<', filter.to)
    if (filter.beforeId !== undefined) q = q.where('id', '<', filter.beforeId)
    return q.orderBy('id', 'desc').limit(filter.limit).execute()
  }
}
