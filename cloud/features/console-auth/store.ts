import type { Kysely, Transaction } from 'kysely'
import type { ConsoleUsersTable, Database } from '../../db/schema.js'

type Executor = Kysely<Database> | Transaction<Database>

export const CONSOLE_ROLES = ['owner', 'admin', 'viewer'] as const
export type ConsoleRole = (typeof CONSOLE_ROLES)[number]

export class ConsoleUserStore {
  constructor(private readonly db: Executor) {}

  async insert(tenantId: string, row: Omit<ConsoleUsersTable, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('console_users')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }
}
