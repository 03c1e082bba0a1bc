import { newId } from '../../../shared/ids.js'
import { isValidTimeZone, nowMicros } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import { DEFAULT_BACKFILL_DAYS, DEFAULT_TIME_ZONE } from '../../auth/tenant-context.js'
import { isUniqueViolation } from '../../db/unique-violation.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { TenantStore } from './store.js'

export interface CreateTenantInput {
  name: string
  adminEmail: string
  timeZone?: string
  backfillDays?: number
}

export interface CreatedTenant {
  tenantId: string
  adminEmail: string
  /** Good for the first sign-in only: the console asks for a new one. Shown once. */
  adminPassword: string
}

/** The stores creating a tenant uses itself; the owner's are whatever `OwnerAccounts` needs of `S`. */
export interface TenantStores {
  tenants: Pick<TenantStore, 'insert'>
}

/**
 * What creating a tenant needs from the console's accounts: its first owner. The service receives it
 * where the services are built, so that tenants/ imports nothing of users/
 * (docs/development/architecture.md, "Cloud layers").
 */
export interface OwnerAccounts<S> {
  /** A password good for the first sign-in only, and its hash; slow, so made before the transaction. */
  newOwnerPassword(): Promise<{ password: string; passwordHash: string }>
  /** Adds the owner through `stores`, those of the transaction that adds the tenant. */
  addOwner(
    stores: S,
    tenantId: string,
    owner: { email: string; passwordHash: string; createdAtMicros: number },
  ): Promise<void>
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export class TenantService<S extends TenantStores> {
  constructor(private readonly deps: { stores: UnitOfWork<S>; owners: OwnerAccounts<NoInfer<S>> }) {}

  async create(input: CreateTenantInput): Promise<CreatedTenant> {
    const name = input.name.trim()
    const adminEmail = input.adminEmail.trim().toLowerCase()
    const timeZone = input.timeZone ?? DEFAULT_TIME_ZONE
    const backfillDays = input.backfillDays ?? DEFAULT_BACKFILL_DAYS
    const errors: string[] = []
    if (name.length < 1 || name.length > 200) errors.push('name: must be 1 to 200 characters')
    if (!EMAIL.test(adminEmail) || adminEmail.length > 254) errors.push('admin email: not an email address')
    if (!isValidTimeZone(timeZone)) errors.push(`time zone: "${timeZone}" is not an IANA time zone`)
    if (!Number.isInteger(backfillDays) || backfillDays < 1 || backfillDays > 3660) {
      errors.push('backfill days: must be a whole number from 1 to 3660')
    }
    if (errors.length > 0) throw new AppError('validation_failed', errors.join('; '))

    const tenantId = newId('tenant')
    const { password: adminPassword, passwordHash } = await this.deps.owners.newOwnerPassword()
    const createdAtMicros = nowMicros()
    try {
      await this.deps.stores.transaction(async (s) => {
        await s.tenants.insert({
          id: tenantId,
          name,
          time_zone: timeZone,
          backfill_days: backfillDays,
          created_at: createdAtMicros,
        })
        await this.deps.owners.addOwner(s, tenantId, {
          email: adminEmail,
          passwordHash,
          createdAtMicros,
        })
      })
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new AppError('console_user_exists', `a console user with email ${adminEmail} already exists`)
      }
      throw err
    }
    return { tenantId, adminEmail, adminPassword }
  }
}
