import { CredentialTable } from '../../db/credential-table.js'
import type { Executor } from '../../db/executor.js'
import { RotatingSecrets } from '../../db/rotating-secrets.js'
import type { OAuthAppsTable, OAuthClientSecretsTable } from '../../db/schema.js'

export type OAuthAppRow = OAuthAppsTable
export type ClientSecretRow = OAuthClientSecretsTable

export interface ClientForAuthentication {
  app: OAuthAppRow
  time_zone: string
  backfill_days: number
  /** Secrets that still work: the current one and any rotated out less than their grace ago. */
  secrets: ClientSecretRow[]
}

/** Ids no row has (ids are `ten_...`/`app_...`): the secrets lookup of an unknown client. */
const NO_TENANT = 'ten_none'
const NO_APP = 'app_none'

/** A tenant's OAuth apps and their client secrets: insert, list, get and revoke of apps come from CredentialTable. */
export class OAuthAppStore extends CredentialTable<'oauth_apps'> {
  constructor(db: Executor) {
    super(db, 'oauth_apps')
  }

  private readonly secrets = new RotatingSecrets(this.db, 'oauth_client_secrets', 'app_id')

  async insertSecret(tenantId: string, row: Omit<ClientSecretRow, 'tenant_id'>): Promise<void> {
    await this.secrets.insert(tenantId, row)
  }

  /** Secrets of these apps that still work at `now`, oldest first. */
  async liveSecrets(tenantId: string, appIds: readonly string[], now: number): Promise<ClientSecretRow[]> {
    if (appIds.length === 0) return []
    return this.secrets.live(tenantId, appIds, now)
  }

  /** Gives every secret of the app that would outlive `until` that expiry instead. */
  async expireSecrets(tenantId: string, appId: string, until: number): Promise<void> {
    await this.secrets.expire(tenantId, appId, until)
  }

  /**
   * Not scoped by tenant: a presented client id is how the token endpoint learns the tenant. Only
   * apps that are not revoked, with their live secrets.
   */
  async findClientForAuthentication(
    clientId: string,
    now: number,
  ): Promise<ClientForAuthentication | undefined> {
    const app = await this.db
      .selectFrom('oauth_apps')
      .innerJoin('tenants', 'tenants.id', 'oauth_apps.tenant_id')
      .selectAll('oauth_apps')
      .select(['tenants.time_zone', 'tenants.backfill_days'])
      .where('oauth_apps.client_id', '=', clientId)
      .where('oauth_apps.revoked_at', 'is', null)
      .executeTakeFirst()
    if (!app) {
      // The secrets query all the same, for an app that cannot exist: an unknown client id costs
      // what a known one does, so the answer's time does not tell which client ids exist.
      await this.liveSecrets(NO_TENANT, [NO_APP], now)
      return undefined
    }
    const { time_zone, backfill_days, ...row } = app
    return {
      app: row,
      time_zone,
      backfill_days,
      secrets: await this.liveSecrets(row.tenant_id, [row.id], now),
    }
  }
}
