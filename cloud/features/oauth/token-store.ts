import type { Kysely, Transaction } from 'kysely'
import { CredentialTable } from '../../db/credential-table.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { Database, OAuthTokensTable } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

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

  /** Housekeeping across tenants: tokens that expired before `before` can never be used again. */
  async purgeExpired(before: number): Promise<number> {
    const result = await this.db
      .deleteFrom('oauth_tokens')
      .where('expires_at', '<', before)
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
