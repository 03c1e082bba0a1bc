import { CredentialTable } from '../../db/credential-table.js'
import { deleteRowsBefore } from '../../db/delete-rows-before.js'
import type { Executor } from '../../db/executor.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { OAuthTokensTable } from '../../db/schema.js'

// On every request made with a token: built and compiled once (see prepareQuery).
const findByHash = prepareQuery(
  (db, tokenHash: string) =>
    db
      .selectFrom('oauth_tokens')
      .innerJoin('oauth_apps', 'oauth_apps.id', 'oauth_tokens.app_id')
      .innerJoin('tenants', 'tenants.id', 'oauth_tokens.tenant_id')
      .selectAll('oauth_tokens')
      .select([
        'oauth_apps.client_id',
        'oauth_apps.rate_limit_per_minute as app_rate_limit_per_minute',
        'oauth_apps.revoked_at as app_revoked_at',
        'tenants.time_zone',
        'tenants.backfill_days',
      ])
      .where('oauth_tokens.token_hash', '=', tokenHash),
  ['token_hash'],
)

export type TokenRow = OAuthTokensTable

export interface TokenForAuthentication extends TokenRow {
  client_id: string
  app_rate_limit_per_minute: number
  app_revoked_at: number | null
  time_zone: string
  backfill_days: number
}

/** Access tokens: insert and revoke come from CredentialTable. */
export class TokenStore extends CredentialTable<'oauth_tokens'> {
  constructor(db: Executor) {
    super(db, 'oauth_tokens')
  }

  /**
   * Not scoped by tenant: a presented token is how we learn the tenant. With its app, whose
   * revocation ends every token at once, and its tenant.
   */
  async findByHashForAuthentication(tokenHash: string): Promise<TokenForAuthentication | undefined> {
    return (await findByHash(this.db, tokenHash))[0]
  }

  /** Housekeeping across tenants: tokens that expired before `beforeMicros` can never be used again. */
  async purgeExpired(beforeMicros: number): Promise<number> {
    return deleteRowsBefore(this.db, 'oauth_tokens', 'expires_at', beforeMicros)
  }
}
