import type { Kysely, Transaction } from 'kysely'
import type { Database, OAuthAppsTable, OAuthClientSecretsTable } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

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

export class OAuthAppStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<OAuthAppRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('oauth_apps')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  async insertSecret(tenantId: string, row: Omit<ClientSecretRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('oauth_client_secrets')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  async list(tenantId: string): Promise<OAuthAppRow[]> {
    return this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute()
  }

  async get(tenantId: string, id: string): Promise<OAuthAppRow | undefined> {
    return this.db
      .selectFrom('oauth_apps')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  /** Secrets of these apps that still work at `now`, oldest first. */
  async liveSecrets(tenantId: string, appIds: readonly string[], now: number): Promise<ClientSecretRow[]> {
    if (appIds.length === 0) return []
    return this.db
      .selectFrom('oauth_client_secrets')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('app_id', 'in', appIds)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id')
      .execute()
  }

  /** Gives every secret of the app that would outlive `until` that expiry instead. */
  async expireSecrets(tenantId: string, appId: string, until: number): Promise<void> {
    await this.db
      .updateTable('oauth_client_secrets')
      .set({ expires_at: until })
      .where('tenant_id', '=', tenantId)
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', until)]))
      .execute()
  }

  async revoke(tenantId: string, id: string, at: number): Promise<boolean> {
    const result = await this.db
      .updateTable('oauth_apps')
      .set({ revoked_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
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
