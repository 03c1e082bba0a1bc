import type { Executor } from '../../db/executor.js'
import type { ConsoleUsersTable } from '../../db/schema.js'

export type ConsoleUserRow = ConsoleUsersTable

export class ConsoleUserStore {
  constructor(private readonly db: Executor) {}

  async insert(
    tenantId: string,
    row: Omit<ConsoleUsersTable, 'tenant_id' | 'last_sign_in_at'>,
  ): Promise<void> {
    await this.db
      .insertInto('console_users')
      .values({ ...row, tenant_id: tenantId, last_sign_in_at: null })
      .execute()
  }

  async get(tenantId: string, id: string): Promise<ConsoleUserRow | undefined> {
    return this.db
      .selectFrom('console_users')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
  }

  async getByEmail(tenantId: string, email: string): Promise<ConsoleUserRow | undefined> {
    return this.db
      .selectFrom('console_users')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('email', '=', email)
      .executeTakeFirst()
  }

  /**
   * The console users a sign-in may be for, oldest first: the one in `tenantId` when the sign-in
   * names its tenant, else those of every tenant with this email (an email is unique within a
   * tenant only), at most `limit`.
   */
  async findForSignIn(
    email: string,
    options: { tenantId?: string | undefined; limit: number },
  ): Promise<ConsoleUserRow[]> {
    let query = this.db.selectFrom('console_users').selectAll().where('email', '=', email)
    if (options.tenantId !== undefined) query = query.where('tenant_id', '=', options.tenantId)
    return query.orderBy('created_at').orderBy('id').limit(options.limit).execute()
  }

  /** The oldest console user with this email, in whichever tenant. */
  async findByEmailForSignIn(email: string): Promise<ConsoleUserRow | undefined> {
    return (await this.findForSignIn(email, { limit: 1 }))[0]
  }

  /** In id order (creation order), from after `afterId`. */
  async list(
    tenantId: string,
    options: { afterId?: string | undefined; limit: number },
  ): Promise<ConsoleUserRow[]> {
    let query = this.db.selectFrom('console_users').selectAll().where('tenant_id', '=', tenantId)
    if (options.afterId !== undefined) query = query.where('id', '>', options.afterId)
    return query.orderBy('id').limit(options.limit).execute()
  }

  async countOwners(tenantId: string): Promise<number> {
    const row = await this.db
      .selectFrom('console_users')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /**
   * Serialises changes to a tenant's users until the transaction ends: without it, two owners
   * removing each other at once would each see the other remain and leave no owner. The no-op
   * UPDATE takes the tenant row's lock on PostgreSQL, and SQLite's write lock.
   */
  async lockTenant(tenantId: string): Promise<void> {
    await this.db
      .updateTable('tenants')
      .set((eb) => ({ last_change_us: eb.ref('last_change_us') }))
      .where('id', '=', tenantId)
      .execute()
  }

  async setPassword(tenantId: string, id: string, passwordHash: string, mustChange: boolean): Promise<void> {
    await this.db
      .updateTable('console_users')
      .set({ password_hash: passwordHash, must_change_password: mustChange ? 1 : 0 })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  async setLastSignIn(tenantId: string, id: string, at: number): Promise<void> {
    await this.db
      .updateTable('console_users')
      .set({ last_sign_in_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .execute()
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('console_users')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }
}
