import { newId } from '../../../shared/ids.js'
import { generatePassword, hashPassword } from './password.js'
import type { ConsoleUserStore } from './store.js'

/**
 * A new tenant's first console user, its owner, as the tenant service asks for one
 * (`OwnerAccounts` in tenants/service.ts). It is handed to that service where the services are
 * built, so that tenants/ imports nothing of users/ (docs/development/architecture.md,
 * "Cloud layers").
 */
export class ConsoleOwnerAccounts {
  /** A password good for the first sign-in only, and its hash (scrypt: slow, so made before any transaction). */
  async newOwnerPassword(): Promise<{ password: string; passwordHash: string }> {
    const password = generatePassword()
    return { password, passwordHash: await hashPassword(password) }
  }

  /**
   * Adds the owner, who must change the password at the first sign-in, through `stores`: those of the
   * tenant's transaction.
   */
  async addOwner(
    stores: { consoleUsers: Pick<ConsoleUserStore, 'insert'> },
    tenantId: string,
    owner: { email: string; passwordHash: string; createdAtMicros: number },
  ): Promise<void> {
    await stores.consoleUsers.insert(tenantId, {
      id: newId('consoleUser'),
      email: owner.email,
      password_hash: owner.passwordHash,
      role: 'owner',
      must_change_password: 1,
      created_at: owner.createdAtMicros,
    })
  }
}
