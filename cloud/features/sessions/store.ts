import type { Executor } from '../../db/executor.js'
import type { ConsoleSessionsTable } from '../../db/schema.js'

export type ConsoleSessionRow = ConsoleSessionsTable

/** A session with what a request needs to know about its user and tenant, read in one query. */
export interface SessionWithUser extends ConsoleSessionRow {
  email: string
  role: string
  must_change_password: number
  user_created_at: number
  last_sign_in_at: number | null
  tenant_name: string
  time_zone: string
  backfill_days: number
}

export class ConsoleSessionStore {
  constructor(private readonly db: Executor) {}

  async insert(row: ConsoleSessionRow): Promise<void> {
    await this.db.insertInto('console_sessions').values(row).execute()
  }

  /** Not scoped by tenant: the presented cookie is how we learn the tenant (as for API keys). */
  async findByHashForAuthentication(tokenHash: string): Promise<SessionWithUser | undefined> {
    return this.db
      .selectFrom('console_sessions')
      .innerJoin('console_users', 'console_users.id', 'console_sessions.user_id')
      .innerJoin('tenants', 'tenants.id', 'console_sessions.tenant_id')
      .selectAll('console_sessions')
      .select([
        'console_users.email',
        'console_users.role',
        'console_users.must_change_password',
        'console_users.created_at as user_created_at',
        'console_users.last_sign_in_at',
        'tenants.name as tenant_name',
        'tenants.time_zone',
        'tenants.backfill_days',
      ])
      .where('console_sessions.token_hash', '=', tokenHash)
      .executeTakeFirst()
  }

  /** Moves the idle expiry on; only forward, so that concurrent requests cannot move it back. */
  async touch(tokenHash: string, at: number): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ last_seen_at: at })
      .where('token_hash', '=', tokenHash)
      .where('last_seen_at', '<', at)
      .execute()
  }

  async delete(tokenHash: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('console_sessions')
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst()
    return Number(result.numDeletedRows) > 0
  }

  /** Ends every session of a user, but `keep` (the one that asked, when it changes its password). */
  async deleteForUser(tenantId: string, userId: string, keep?: string): Promise<number> {
    let query = this.db
      .deleteFrom('console_sessions')
      .where('tenant_id', '=', tenantId)
      .where('user_id', '=', userId)
    if (keep !== undefined) query = query.where('token_hash', '<>', keep)
    const result = await query.executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  /** Sessions past their absolute expiry, or idle since before `idleBefore`. */
  async deleteExpired(now: number, idleBefore: number): Promise<number> {
    const result = await this.db
      .deleteFrom('console_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleBefore)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
}
