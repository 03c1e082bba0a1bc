import type { Kysely, Transaction } from 'kysely'
import { prepareQuery } from '../../db/prepared-query.js'
import type { AdminTokensTable, Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

export type AdminTokenRow = AdminTokensTable

export interface AdminTokenWithTenant extends AdminTokenRow {
  time_zone: string
  backfill_days: number
}

const findByHash = prepareQuery(
  (db, tokenHash: string) =>
    db
      .selectFrom('admin_tokens')
      .innerJoin('tenants', 'tenants.id', 'admin_tokens.tenant_id')
      .selectAll('admin_tokens')
      .select(['tenants.time_zone', 'tenants.backfill_days'])
      .where('admin_tokens.token_hash', '=', tokenHash),
  ['token_hash'],
)

export class AdminTokenStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<AdminTokenRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('admin_tokens')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  async list(tenantId: string): Promise<AdminTokenRow[]> {
    return this.db
      .selectFrom('admin_tokens')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute()
  }

  async get(tenantId: string, id: string): Promise<AdminTokenRow | undefined> {
    return this.db
      .selectFrom('admin_tokens')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async revoke(tenantId: string, id: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('admin_tokens')
      .set({ revoked_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  /** Not scoped by tenant: the presented token is how we learn the tenant (as for API keys). */
  async findByHashForAuthentication(tokenHash: string): Promise<AdminTokenWithTenant | undefined> {
    return (await findByHash(this.db, tokenHash))[0]
  }
}
