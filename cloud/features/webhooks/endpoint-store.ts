import type { Executor } from '../../db/executor.js'
import { RotatingSecrets } from '../../db/rotating-secrets.js'
import type { WebhookEndpointsTable, WebhookSecretsTable } from '../../db/schema.js'
import { stampedUpdate } from '../../db/stamped-update.js'

export type EndpointRow = WebhookEndpointsTable
export type EndpointSecretRow = WebhookSecretsTable

/** What may change of an endpoint once registered. */
export type EndpointChanges = Partial<
  Pick<
    EndpointRow,
    'url' | 'description' | 'events' | 'status' | 'disabled_reason' | 'failing_since' | 'deleted_at'
  >
>

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

  /** The tenant's live (not deleted) endpoints, to select from. */
  private live(tenantId: string) {
    return this.db
      .selectFrom('webhook_endpoints')
      .where('tenant_id', '=', tenantId)
      .where('deleted_at', 'is', null)
  }

  /** A live (not deleted) endpoint of the tenant. */
  async get(tenantId: string, id: string): Promise<EndpointRow | undefined> {
    return this.live(tenantId).selectAll().where('id', '=', id).executeTakeFirst()
  }

  /** How many live (not deleted) endpoints the tenant has. */
  async countLive(tenantId: string): Promise<number> {
    const row = await this.live(tenantId)
      .select((eb) => eb.fn.countAll<number>().as('n'))
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
    return this.live(tenantId).selectAll().orderBy('id').execute()
  }

  /** A tenant's endpoints that are not deleted, which may take deliveries now or later. */
  async subscribers(tenantId: string): Promise<Pick<EndpointRow, 'id' | 'events' | 'status'>[]> {
    return (
      this.live(tenantId)
        .select(['id', 'events', 'status'])
        // One order everywhere: two fan-outs of an event insert its deliveries in the same order.
        .orderBy('id')
        .execute()
    )
  }

  async update(tenantId: string, id: string, changes: EndpointChanges, atMicros: number): Promise<void> {
    await stampedUpdate(this.db, 'webhook_endpoints', tenantId, id, changes, atMicros).execute()
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
