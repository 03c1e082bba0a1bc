import type { Kysely, Transaction } from 'kysely'
import { RotatingSecrets } from '../../db/rotating-secrets.js'
import type { Database, WebhookEndpointsTable, WebhookSecretsTable } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

export type EndpointRow = WebhookEndpointsTable
export type EndpointSecretRow = WebhookSecretsTable

export class EndpointStore {
  private readonly secrets: RotatingSecrets<'webhook_secrets'>

  constructor(private readonly db: Executor) {
    this.secrets = new RotatingSecrets(db, 'webhook_secrets', 'endpoint_id')
  }

  async insert(tenantId: string, row: Omit<EndpointRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('webhook_endpoints')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  /** A live (not deleted) endpoint of the tenant. */
  async get(tenantId: string, id: string): Promise<EndpointRow | undefined> {
    return this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
  }

  /** How many live (not deleted) endpoints the tenant has. */
  async countLive(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * PostgreSQL: makes registrations of one tenant's endpoints wait for each other, by locking the
   * tenant's row until the transaction ends, so that two of them cannot both count the endpoints
   * below the cap and both insert. FOR NO KEY UPDATE: the foreign-key checks of other inserts (FOR KEY
   * SHARE) go on. SQLite has one writer: nothing to wait for.
   */
  async lockTenantRegistrations(tenantId: string): Promise<void> {
    await this.db.selectFrom('tenants').select('id').where('id', '=', tenantId).forNoKeyUpdate().execute()
  }

  async list(tenantId: string): Promise<EndpointRow[]> {
    return this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .execute()
  }

  async update(
    tenantId: string,
    id: string,
    changes: Partial<
      Pick<
        EndpointRow,
        'url' | 'description' | 'events' | 'status' | 'disabled_reason' | 'failing_since' | 'deleted_at'
      >
    >,
    at: number,
  ): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ ...changes, updated_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  async insertSecret(tenantId: string, row: Omit<EndpointSecretRow, 'tenant_id'>): Promise<void> {
    await this.secrets.insert(tenantId, row)
  }

  /** The secrets deliveries are signed with at `now`: the current one, and rotated ones in their grace. */
  async liveSecrets(tenantId: string, endpointId: string, now: number): Promise<EndpointSecretRow[]> {
    return this.secrets.live(tenantId, endpointId, now)
  }

  async expireSecrets(tenantId: string, endpointId: string, until: number): Promise<void> {
    await this.secrets.expire(tenantId, endpointId, until)
  }
}
