import { CredentialTable, prepareFindByHash, type WithTenant } from '../../db/credential-table.js'
import type { Executor } from '../../db/executor.js'
import type { AdminTokensTable } from '../../db/schema.js'

export type AdminTokenRow = AdminTokensTable

export type AdminTokenWithTenant = WithTenant<AdminTokenRow>

const findByHash = prepareFindByHash('admin_tokens', 'token_hash')

/** A tenant's admin tokens: insert, list, get and revoke come from CredentialTable. */
export class AdminTokenStore extends CredentialTable<'admin_tokens'> {
  constructor(db: Executor) {
    super(db, 'admin_tokens')
  }

  /** Not scoped by tenant: the presented token is how we learn the tenant (as for API keys). */
  async findByHashForAuthentication(tokenHash: string): Promise<AdminTokenWithTenant | undefined> {
    return findByHash(this.db, tokenHash)
  }
}
