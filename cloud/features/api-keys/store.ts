import { CredentialTable, prepareFindByHash, type WithTenant } from '../../db/credential-table.js'
import type { Executor } from '../../db/executor.js'
import type { ApiKeysTable } from '../../db/schema.js'

// On every request: built and compiled once (see prepareQuery).
const findByHash = prepareFindByHash('api_keys', 'key_hash')

export type ApiKeyWithTenant = WithTenant<ApiKeysTable>

/** A tenant's API keys: insert, list, get and revoke come from CredentialTable. */
export class ApiKeyStore extends CredentialTable<'api_keys'> {
  constructor(db: Executor) {
    super(db, 'api_keys')
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
    return findByHash(this.db, keyHash)
  }
}
