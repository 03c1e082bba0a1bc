import type { Kysely } from 'kysely'
import { newId } from '../../../shared/ids.js'
import { isScope, type Scope } from '../../../shared/scopes.js'
import { formatServerTime, nowMicros } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Database } from '../../db/schema.js'
import { TenantStore } from '../tenants/store.js'
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.js'
import type { AuthContext } from './auth-context.js'
import { ApiKeyStore } from './store.js'

export const DEFAULT_API_KEY_TTL_SECONDS = 90 * 86_400
export const MAX_API_KEY_TTL_SECONDS = 2 * 365 * 86_400
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600
export const MAX_RATE_LIMIT_PER_MINUTE = 100_000

export interface CreateApiKeyInput {
  name?: string
  scopes: string[]
  rateLimitPerMinute?: number
  expiresInSeconds?: number
}

export interface CreatedApiKey {
  id: string
  /** The secret. Shown once; only its SHA-256 is kept. */
  key: string
  name: string
  scopes: Scope[]
  rateLimitPerMinute: number
  expiresAt: string
}

export class ApiKeyService {
  constructor(private readonly deps: { db: Kysely<Database>; now?: () => number }) {}

  private now(): number {
    return this.deps.now?.() ?? nowMicros()
  }

  async create(tenantId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
    const name = (input.name ?? 'api key').trim()
    const rateLimitPerMinute = input.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE
    const ttl = input.expiresInSeconds ?? DEFAULT_API_KEY_TTL_SECONDS
    const errors: string[] = []
    if (name.length < 1 || name.length > 100) errors.push('name: must be 1 to 100 characters')
    const scopes = [...new Set(input.scopes)]
    if (scopes.length === 0) errors.push('scopes: at least one is required')
    for (const scope of scopes) if (!isScope(scope)) errors.push(`scopes: "${scope}" is not a scope`)
    if (
      !Number.isInteger(rateLimitPerMinute) ||
      rateLimitPerMinute < 1 ||
      rateLimitPerMinute > MAX_RATE_LIMIT_PER_MINUTE
    ) {
      errors.push(
        `rate limit: must be a whole number of requests per minute from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}`,
      )
    }
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > MAX_API_KEY_TTL_SECONDS) {
      errors.push('expiry: must be from 1 minute to 2 years')
    }
    if (errors.length > 0) throw new AppError('validation_failed', errors.join('; '))

    if (!(await new TenantStore(this.deps.db).get(tenantId))) {
      throw new AppError('tenant_not_found', `no tenant ${tenantId}`)
    }
    const key = generateApiKey()
    const now = this.now()
    const expiresAt = now + ttl * 1_000_000
    const id = newId('apiKey')
    await new ApiKeyStore(this.deps.db).insert(tenantId, {
      id,
      name,
      key_hash: hashApiKey(key),
      key_prefix: apiKeyDisplayPrefix(key),
      scopes: scopes.join(' '),
      rate_limit_per_minute: rateLimitPerMinute,
      expires_at: expiresAt,
      created_at: now,
      revoked_at: null,
      last_used_at: null,
    })
    return {
      id,
      key,
      name,
      scopes: scopes as Scope[],
      rateLimitPerMinute,
      expiresAt: formatServerTime(expiresAt),
    }
  }

  /** The caller behind a bearer token, or undefined if it is not a live key of ours. */
  async authenticate(token: string): Promise<AuthContext | undefined> {
    // The checksum refuses mistyped and invented keys before any database work.
    if (!isWellFormedApiKey(token)) return undefined
    const row = await new ApiKeyStore(this.deps.db).findByHashForAuthentication(hashApiKey(token))
    if (!row || row.revoked_at !== null || row.expires_at <= this.now()) return undefined
    return {
      tenant: { id: row.tenant_id, timeZone: row.time_zone, backfillDays: row.backfill_days },
      credential: {
        kind: 'api_key',
        id: row.id,
        scopes: row.scopes.split(' ').filter(isScope),
        rateLimitPerMinute: row.rate_limit_per_minute,
      },
    }
  }
}
