import type { Kysely, Transaction } from 'kysely'
import type { ApiKeysTable, Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

export interface ApiKeyWithTenant extends ApiKeysTable {
  time_zone: string
  backfill_days: number
}

export class ApiKeyStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<ApiKeysTable, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  /**
   * The one lookup not scoped by tenant: a presented key is how we learn the tenant. The hash is
   * of a CSPRNG secret, so finding a row by it reveals nothing about other tenants' keys.
   */
  async findByHashForAuthentication(keyHash: string): Promise<ApiKeyWithTenant | undefined> {
    return this.db
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .selectAll('api_keys')
      .select(['tenants.time_zone', 'tenants.backfill_days'])
      .where('api_keys.key_hash', '=', keyHash)
      .executeTakeFirst()
  }
}
