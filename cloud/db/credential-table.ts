import type { Kysely, Transaction } from 'kysely'
import { prepareQuery } from './prepared-query.js'
import type { Database } from './schema.js'

type Executor = Kysely<Database> | Transaction<Database>

/** What every revocable credential row has: its tenant, its id and when it was revoked. */
interface CredentialColumns {
  tenant_id: string
  id: string
  revoked_at: number | null
}

/** The tables of revocable credentials: API keys, OAuth apps and tokens, admin tokens. */
type CredentialTableName = {
  [T in keyof Database]: Database[T] extends CredentialColumns ? T : never
}[keyof Database]

/** The credential tables that are found by the hash of the secret a caller presents. */
type HashedTableName = {
  [T in CredentialTableName]: Database[T] extends { token_hash: string } | { key_hash: string } ? T : never
}[CredentialTableName]

type HashColumn<T extends HashedTableName> = Extract<keyof Database[T], 'token_hash' | 'key_hash'>

type HashRef = { [T in HashedTableName]: `${T}.${HashColumn<T>}` }[HashedTableName]

/** A credential with what authentication needs to know of its tenant. */
export type WithTenant<Row> = Row & { time_zone: string; backfill_days: number }

/**
 * The same statements for every credential table, typed as one table with the common columns: the
 * table's name is a value here, which Kysely's types cannot follow, and the rows are handed back
 * as the concrete table's type by the callers below, who name the table.
 */
type CommonView = Kysely<Record<CredentialTableName, CredentialColumns>>

/**
 * A tenant's credentials in one table: insert, list, get and revoke, every statement scoped by
 * tenant (docs/development/architecture.md, Tenancy). Stores of one kind of credential extend it
 * with what only that kind does.
 */
export class CredentialTable<T extends CredentialTableName> {
  constructor(
    protected readonly db: Executor,
    private readonly table: T,
  ) {}

  private get common(): CommonView {
    return this.db as unknown as CommonView
  }

  private get name(): CredentialTableName {
    return this.table
  }

  async insert(tenantId: string, row: Omit<Database[T], 'tenant_id'>): Promise<void> {
    await this.common
      .insertInto(this.name)
      .values({ ...(row as Omit<CredentialColumns, 'tenant_id'>), tenant_id: tenantId })
      .execute()
  }

  /** In id order, which is creation order. */
  async list(tenantId: string): Promise<Database[T][]> {
    const rows = await this.common
      .selectFrom(this.name)
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute()
    return rows as Database[T][]
  }

  async get(tenantId: string, id: string): Promise<Database[T] | undefined> {
    const row = await this.common
      .selectFrom(this.name)
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    return row as Database[T] | undefined
  }

  /** Marks the credential revoked; false if it was already (or does not exist). */
  async revoke(tenantId: string, id: string, at: number): Promise<boolean> {
    const result = await this.common
      .updateTable(this.name)
      .set({ revoked_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    return Number(result.numUpdatedRows) > 0
  }
}

/**
 * The lookup of a presented secret by its hash, with the tenant: the one query not scoped by
 * tenant, since the secret is how we learn the tenant. The hash is of a CSPRNG secret, so finding a
 * row by it reveals nothing about other tenants' credentials. Built and compiled once (see
 * prepareQuery): it runs on every request.
 */
export function prepareFindByHash<T extends HashedTableName>(table: T, hashColumn: HashColumn<T>) {
  // Widened to the union of hashed tables, whose columns Kysely's types can follow.
  const name: HashedTableName = table
  const hashRef = `${table}.${hashColumn}` as HashRef
  const find = prepareQuery(
    (db, hash: string) =>
      db
        .selectFrom(name)
        .innerJoin('tenants', 'tenants.id', `${name}.tenant_id`)
        .selectAll(name)
        .select(['tenants.time_zone', 'tenants.backfill_days'])
        .where(hashRef, '=', hash),
    [hashColumn as string] as [string],
  )
  return async (db: Executor, hash: string): Promise<WithTenant<Database[T]> | undefined> =>
    (await find(db, hash))[0] as WithTenant<Database[T]> | undefined
}
