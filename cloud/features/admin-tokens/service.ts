import { newId } from '../../../shared/ids.js'
import { formatServerTime } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { ConsoleContext } from '../../auth/console-context.js'
import {
  displayPrefix,
  generateSecret,
  hashSecret,
  isWellFormedSecret,
  type SecretKind,
} from '../../auth/secret-format.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { tenantOfCredential } from '../bearer-auth/credential-auth-context.js'
import type { TenantStore } from '../tenants/store.js'
import type { AdminTokenRow, AdminTokenStore } from './store.js'

/** `hjt_`: admin tokens for the console API. ≈ 238 bits. */
export const ADMIN_TOKEN: SecretKind = { prefix: 'hjt_', randomLength: 40 }

/** An admin token is a tenant's master key to its integrations: short-lived by default. */
export const DEFAULT_ADMIN_TOKEN_TTL_SECONDS = 30 * 86_400
const MAX_ADMIN_TOKEN_TTL_SECONDS = 365 * 86_400

export interface AdminTokenSummary {
  id: string
  name: string
  status: 'active' | 'expired' | 'revoked'
  createdAt: string
  expiresAt: string
  revokedAt: string | null
}

function toSummary(row: AdminTokenRow, now: number): AdminTokenSummary {
  return {
    id: row.id,
    name: row.name,
    status: row.revoked_at !== null ? 'revoked' : row.expires_at <= now ? 'expired' : 'active',
    createdAt: formatServerTime(row.created_at),
    expiresAt: formatServerTime(row.expires_at),
    revokedAt: row.revoked_at === null ? null : formatServerTime(row.revoked_at),
  }
}

/** The stores admin tokens use. */
export interface AdminTokenStores {
  tenants: Pick<TenantStore, 'get'>
  adminTokens: AdminTokenStore
  audit: AuditStore
}

/**
 * Admin tokens (docs/decisions/0047-admin-tokens-and-sessions.md): scripts reach the console API with
 * a bearer token that a tenant's operator issues with the CLI (people sign in to the console instead). Like
 * every secret, it is shown once and only its SHA-256 is kept; it has an expiry and can be revoked; both acts
 * are audited.
 */
export class AdminTokenService {
  constructor(
    private readonly deps: { stores: UnitOfWork<AdminTokenStores>; audit: AuditService; now: () => number },
  ) {}

  async create(
    tenantId: string,
    input: { name?: string | undefined; expiresInSeconds?: number | undefined },
    actor: Actor,
  ): Promise<AdminTokenSummary & { token: string }> {
    const ttl = input.expiresInSeconds ?? DEFAULT_ADMIN_TOKEN_TTL_SECONDS
    const name = (input.name ?? 'admin token').trim()
    const errors: string[] = []
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_ADMIN_TOKEN_TTL_SECONDS)
      errors.push('expires in: must be from 1 minute to 1 year')
    if (name.length === 0 || name.length > 100) errors.push('name: must be 1 to 100 characters')
    if (errors.length > 0) throw new AppError('validation_failed', errors.join('; '))
    const now = this.deps.now()
    const token = generateSecret(ADMIN_TOKEN)
    const row = {
      id: newId('adminToken'),
      name,
      token_hash: hashSecret(token),
      created_at: now,
      expires_at: now + ttl * 1_000_000,
      revoked_at: null,
    }
    await this.deps.stores.transaction(async (s) => {
      if (!(await s.tenants.get(tenantId))) throw new AppError('tenant_not_found', `No tenant ${tenantId}.`)
      await s.adminTokens.insert(tenantId, row)
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'admin_token.created',
        target: { type: 'admin_token', id: row.id },
        details: {
          name,
          prefix: displayPrefix(ADMIN_TOKEN, token),
          expiresAt: formatServerTime(row.expires_at),
        },
      })
    })
    return { ...toSummary({ ...row, tenant_id: tenantId }, now), token }
  }

  async list(tenantId: string): Promise<AdminTokenSummary[]> {
    const now = this.deps.now()
    return (await this.deps.stores.read.adminTokens.list(tenantId)).map((row) => toSummary(row, now))
  }

  async revoke(tenantId: string, id: string, actor: Actor): Promise<AdminTokenSummary> {
    const now = this.deps.now()
    return this.deps.stores.transaction(async (s) => {
      const row = await s.adminTokens.get(tenantId, id)
      if (!row) throw new AppError('not_found', `No admin token ${id}.`)
      if (await s.adminTokens.revoke(tenantId, id, now)) {
        await this.deps.audit.record(s.audit, tenantId, actor, {
          action: 'admin_token.revoked',
          target: { type: 'admin_token', id },
          details: { name: row.name },
        })
      }
      return toSummary({ ...row, revoked_at: row.revoked_at ?? now }, now)
    })
  }

  /** The caller behind a presented token, or undefined. Not cached: a revoked token fails at once. */
  async authenticate(token: string, ip: string | null): Promise<ConsoleContext | undefined> {
    if (!isWellFormedSecret(ADMIN_TOKEN, token)) return undefined
    const row = await this.deps.stores.read.adminTokens.findByHashForAuthentication(hashSecret(token))
    if (!row || row.revoked_at !== null || row.expires_at <= this.deps.now()) return undefined
    return {
      tenant: tenantOfCredential(row),
      // An admin token can do what a tenant admin can, including inviting and removing console
      // users other than owners: everything the console does is scriptable.
      role: 'admin',
      actor: { name: `admin_token:${row.id}`, ip },
      rateLimitKey: row.id,
    }
  }
}
