import type { Kysely, Transaction } from 'kysely'
import type { Database } from './schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** Tables of secrets that rotate with a grace period, and the column naming what each secret is of. */
interface SecretTables {
  oauth_client_secrets: 'app_id'
  webhook_secrets: 'endpoint_id'
}

type SecretTableName = keyof SecretTables

/**
 * Both tables seen as one, with both owner columns: the table and its owner column are values here,
 * which Kysely's types cannot follow. The rows are handed back as the named table's type.
 */
type CommonView = Kysely<
  Record<
    SecretTableName,
    { tenant_id: string; id: string; expires_at: number | null; app_id: string; endpoint_id: string }
  >
>

/**
 * The secrets of an OAuth app or a webhook endpoint: the current one has no expiry; a rotation gives
 * the ones before it an expiry, and they keep working until then, so that the other side can move to
 * the new secret without a moment when nothing works. Every statement is scoped by tenant.
 */
export class RotatingSecrets<T extends SecretTableName> {
  constructor(
    private readonly db: Executor,
    private readonly table: T,
    private readonly owner: SecretTables[T],
  ) {}

  private get common(): CommonView {
    return this.db as unknown as CommonView
  }

  async insert(tenantId: string, row: Omit<Database[T], 'tenant_id'>): Promise<void> {
    await this.common
      .insertInto(this.table as SecretTableName)
      // The row has its own table's owner column only, where the common view has both.
      .values({ ...row, tenant_id: tenantId } as never)
      .execute()
  }

  /** The secrets of the owner (or owners) that still work at `now`, oldest first. */
  async live(tenantId: string, owners: string | readonly string[], now: number): Promise<Database[T][]> {
    const owner: SecretTables[SecretTableName] = this.owner
    const rows = await this.common
      .selectFrom(this.table as SecretTableName)
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where((eb) => (typeof owners === 'string' ? eb(owner, '=', owners) : eb(owner, 'in', owners)))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id')
      .execute()
    return rows as unknown as Database[T][]
  }

  /** Gives every secret of the owner that would outlive `until` that expiry instead. */
  async expire(tenantId: string, ownerId: string, until: number): Promise<void> {
    const owner: SecretTables[SecretTableName] = this.owner
    await this.common
      .updateTable(this.table as SecretTableName)
      .set({ expires_at: until })
      .where('tenant_id', '=', tenantId)
      .where(owner, '=', ownerId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', until)]))
      .execute()
  }
}
