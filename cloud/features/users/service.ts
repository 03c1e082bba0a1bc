import type {
  ConsoleRole,
  ConsoleUser,
  ConsoleUserInvite,
  ConsoleUserListQuery,
  InvitedConsoleUser,
} from '../../../shared/console-auth.js'
import { isId, newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import { decodeCursor, readPage } from '../../cursor.js'
import { isUniqueViolation } from '../../db/unique-violation.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type { ConsoleSessionStore } from '../sessions/store.js'
import { SignInThrottle, type SignInThrottleStores } from '../sign-in-throttle/sign-in-throttle.js'
import { generatePassword, hashPassword } from './password.js'
import type { ConsoleUserStore } from './store.js'
import { consoleUserView, normalizeEmail } from './user-view.js'

/** Who asks: their role decides whom they may invite or remove. */
export interface ConsoleCaller {
  role: ConsoleRole
  actor: Actor
}

/**
 * Admins can invite and remove users (docs/decisions/0050-console-roles.md). Owners manage everyone; admins
 * (and admin tokens, which act as admins) manage admins and viewers but never an owner, so an admin cannot
 * take a tenant from its owners; viewers manage no one. A tenant always keeps at least one owner.
 */
function assertMayManage(caller: ConsoleCaller, role: string, doing: string): void {
  if (caller.role === 'viewer')
    throw new AppError('insufficient_role', 'A viewer can read but not change anything.')
  if (role === 'owner' && caller.role !== 'owner')
    throw new AppError('insufficient_role', `Only an owner can ${doing} an owner.`)
}

/** The stores console users are managed with. */
export interface ConsoleUserStores extends SignInThrottleStores {
  consoleUsers: ConsoleUserStore
  consoleSessions: Pick<ConsoleSessionStore, 'deleteForUser'>
  audit: AuditStore
}

export class ConsoleUserService {
  private readonly throttle: SignInThrottle

  constructor(
    private readonly deps: { stores: UnitOfWork<ConsoleUserStores>; audit: AuditService; now: () => number },
  ) {
    this.throttle = new SignInThrottle(deps)
  }

  /** In the order they were created. */
  async list(
    tenantId: string,
    query: ConsoleUserListQuery,
  ): Promise<{ data: ConsoleUser[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const afterId =
      query.cursor === undefined
        ? undefined
        : decodeCursor(query.cursor, (v) => (isId('consoleUser', v.u) ? v.u : undefined))
    const { rows, nextCursor } = await readPage(
      limit,
      (n) => this.deps.stores.read.consoleUsers.list(tenantId, { afterId, limit: n }),
      (last) => ({ u: last.id }),
    )
    return { data: rows.map(consoleUserView), nextCursor }
  }

  /** A new user with a one-time password, shown once: they choose their own at the first sign-in. */
  async invite(
    tenantId: string,
    input: ConsoleUserInvite,
    caller: ConsoleCaller,
  ): Promise<InvitedConsoleUser> {
    assertMayManage(caller, input.role, 'invite')
    const email = normalizeEmail(input.email)
    const temporaryPassword = generatePassword()
    const passwordHash = await hashPassword(temporaryPassword)
    const now = this.deps.now()
    const row = {
      id: newId('consoleUser'),
      email,
      password_hash: passwordHash,
      role: input.role,
      must_change_password: 1,
      created_at: now,
    }
    try {
      await this.deps.stores.transaction(async (s) => {
        await s.consoleUsers.insert(tenantId, row)
        await this.deps.audit.record(s.audit, tenantId, caller.actor, {
          action: 'console_user.invited',
          target: { type: 'console_user', id: row.id },
          details: { email, role: input.role },
        })
      })
    } catch (err) {
      // Emails are unique within a tenant only: this answer speaks of this tenant's users, never
      // of another tenant's, so it tells no one which emails other tenants have.
      if (isUniqueViolation(err))
        throw new AppError(
          'console_user_exists',
          `This tenant already has a console user with email ${email}.`,
        )
      throw err
    }
    return { user: consoleUserView({ ...row, last_sign_in_at: null }), temporaryPassword }
  }

  /** Removes a user and ends their sessions at once. Never the tenant's last owner. */
  async remove(tenantId: string, userId: string, caller: ConsoleCaller): Promise<void> {
    await this.deps.stores.transaction(async (s) => {
      const users = s.consoleUsers
      await users.lockTenant(tenantId)
      const user = await users.get(tenantId, userId)
      if (!user) throw new AppError('console_user_not_found', `No console user ${userId}.`)
      assertMayManage(caller, user.role, 'remove')
      if (user.role === 'owner' && (await users.countOwners(tenantId)) <= 1)
        throw new AppError('last_owner', 'This is the only owner: make another user an owner first.')
      const sessions = await s.consoleSessions.deleteForUser(tenantId, userId)
      await users.delete(tenantId, userId)
      await this.deps.audit.record(s.audit, tenantId, caller.actor, {
        action: 'console_user.removed',
        target: { type: 'console_user', id: userId },
        details: { email: user.email, role: user.role, sessionsEnded: sessions },
      })
    })
  }

  /**
   * For an operator, when a user (perhaps the only owner) cannot sign in: a new one-time password,
   * every session ended, and the email's sign-in delays lifted. Found by email: that is what the user knows.
   */
  async resetPassword(tenantId: string, email: string, actor: Actor): Promise<InvitedConsoleUser> {
    const normalized = normalizeEmail(email)
    const temporaryPassword = generatePassword()
    const passwordHash = await hashPassword(temporaryPassword)
    const user = await this.deps.stores.transaction(async (s) => {
      const users = s.consoleUsers
      const found = await users.getByEmail(tenantId, normalized)
      if (!found)
        throw new AppError('console_user_not_found', `No console user ${normalized} in tenant ${tenantId}.`)
      await users.setPassword(tenantId, found.id, passwordHash, true)
      const sessions = await s.consoleSessions.deleteForUser(tenantId, found.id)
      await this.throttle.forgetEmail(normalized, s.signInThrottle)
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'console_user.password_reset',
        target: { type: 'console_user', id: found.id },
        details: { email: normalized, sessionsEnded: sessions },
      })
      return { ...found, password_hash: passwordHash, must_change_password: 1 }
    })
    return { user: consoleUserView(user), temporaryPassword }
  }
}
