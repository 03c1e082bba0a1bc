import type { Kysely, Transaction } from 'kysely'
import { prepareQuery } from '../../db/prepared-query.js'
import type { ApiKeysTable, Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

// On every request: built and compiled once (see prepareQuery).
const findByHash = prepareQuery(
  (db, keyHash: string) =>
    db
      .selectFrom('api_keys')
      .innerJoin('tenants', 'tenants.id', 'api_keys.tenant_id')
      .selectAll('api_keys')
      .select(['tenants.time_zone', 'tenants.backfill_days'])
      .where('api_keys.key_hash', '=', keyHash),
  ['key_hash'],
)

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

  async list(tenantId: string): Promise<ApiKeysTable[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute()
  }

  async get(tenantId: string, id: string): Promise<ApiKeysTable | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** Marks the key revoked; false if it was already (or does not exist). */
  async revoke(tenantId: string, id: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }

  async touch(tenantId: string, id: string, at: number): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  /**
   * The one lookup not scoped by tenant: a presented key is how we learn the tenant. The hash is
   * of a CSPRNG secret, so finding a row by it reveals nothing about other tenants' keys.
   */
  async findByHashForAuthentication(keyHash: string): Promise<ApiKeyWithTenant | undefined> {
    return (await findByHash(this.db, keyHash))[0]
  }
}
