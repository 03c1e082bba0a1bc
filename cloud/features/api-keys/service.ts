import type { ApiKeySummary } from '../../../shared/credentials.js'
import { newId } from '../../../shared/ids.js'
import type { Scope } from '../../../shared/scopes.js'
import { formatServerTime } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { AuthContext } from '../../auth/auth-context.js'
import type { ApiKeysTable } from '../../db/schema.js'
import { credentialAuthContext } from '../bearer-auth/credential-auth-context.js'
import type { CredentialServiceDeps } from '../bearer-auth/credential-service-deps.js'
import { checkCredentialSettings, parseScopes } from '../bearer-auth/credential-settings.js'
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.js'
import type { ApiKeyStore } from './store.js'

export const DEFAULT_API_KEY_TTL_SECONDS = 90 * 86_400
export const MAX_API_KEY_TTL_SECONDS = 2 * 365 * 86_400
/** lastUsedAt is kept to the minute: a write per request would cost more than it tells. */
const LAST_USED_RESOLUTION_MICROS = 60 * 1_000_000

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

function toSummary(row: ApiKeysTable, now: number): ApiKeySummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    scopes: parseScopes(row.scopes),
    rateLimitPerMinute: row.rate_limit_per_minute,
    status: row.revoked_at !== null ? 'revoked' : row.expires_at <= now ? 'expired' : 'active',
    createdAt: formatServerTime(row.created_at),
    expiresAt: formatServerTime(row.expires_at),
    lastUsedAt: row.last_used_at === null ? null : formatServerTime(row.last_used_at),
    revokedAt: row.revoked_at === null ? null : formatServerTime(row.revoked_at),
  }
}

/**
 * API keys (docs/decisions/0015-secret-formats.md): created, listed and revoked by a tenant admin; checked
 * on every request.
 */
export class ApiKeyService {
  constructor(private readonly deps: CredentialServiceDeps<{ apiKeys: ApiKeyStore }>) {}

  async create(tenantId: string, input: CreateApiKeyInput, actor: Actor): Promise<CreatedApiKey> {
    const ttl = input.expiresInSeconds ?? DEFAULT_API_KEY_TTL_SECONDS
    const settings = checkCredentialSettings(
      { name: input.name ?? 'api key', scopes: input.scopes, rateLimitPerMinute: input.rateLimitPerMinute },
      !Number.isInteger(ttl) || ttl < 60 || ttl > MAX_API_KEY_TTL_SECONDS
        ? ['expiry: must be from 1 minute to 2 years']
        : [],
    )
    const key = generateApiKey()
    const now = this.deps.now()
    const expiresAtMicros = now + ttl * 1_000_000
    const id = newId('apiKey')
    await this.deps.stores.transaction(async (s) => {
      if (!(await s.tenants.get(tenantId))) throw new AppError('tenant_not_found', `No tenant ${tenantId}.`)
      await s.apiKeys.insert(tenantId, {
        id,
        name: settings.name,
        key_hash: hashApiKey(key),
        key_prefix: apiKeyDisplayPrefix(key),
        scopes: settings.scopes.join(' '),
        rate_limit_per_minute: settings.rateLimitPerMinute,
        expires_at: expiresAtMicros,
        created_at: now,
        revoked_at: null,
        last_used_at: null,
      })
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'api_key.created',
        target: { type: 'api_key', id },
        details: {
          name: settings.name,
          scopes: settings.scopes,
          rateLimitPerMinute: settings.rateLimitPerMinute,
          expiresAt: formatServerTime(expiresAtMicros),
        },
      })
      const stored = await s.apiKeys.get(tenantId, id)
      if (stored)
        await this.deps.outbox.emit(s.outbox, tenantId, [
          { type: 'api_key.created', data: toSummary(stored, now) },
        ])
    })
    this.deps.outbox.committed()
    return { id, key, ...settings, expiresAt: formatServerTime(expiresAtMicros) }
  }

  /** One key as lists show it (the console shows a new key so, beside its secret). */
  async get(tenantId: string, id: string): Promise<ApiKeySummary> {
    const row = await this.deps.stores.read.apiKeys.get(tenantId, id)
    if (!row) throw new AppError('api_key_not_found', `No API key ${id}.`)
    return toSummary(row, this.deps.now())
  }

  async list(tenantId: string): Promise<ApiKeySummary[]> {
    const now = this.deps.now()
    return (await this.deps.stores.read.apiKeys.list(tenantId)).map((row) => toSummary(row, now))
  }

  /**
   * Revokes a key; the very next request with it is refused: no cached lookup outlives it
   * (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md).
   */
  async revoke(tenantId: string, id: string, actor: Actor): Promise<ApiKeySummary> {
    const now = this.deps.now()
    const summary = await this.deps.stores.transaction(async (s) => {
      const row = await s.apiKeys.get(tenantId, id)
      if (!row) throw new AppError('api_key_not_found', `No API key ${id}.`)
      const revoked = toSummary({ ...row, revoked_at: row.revoked_at ?? now }, now)
      if (await s.apiKeys.revoke(tenantId, id, now)) {
        await this.deps.audit.record(s.audit, tenantId, actor, {
          action: 'api_key.revoked',
          target: { type: 'api_key', id },
          details: { name: row.name },
        })
        await this.deps.outbox.emit(s.outbox, tenantId, [{ type: 'api_key.revoked', data: revoked }])
      }
      return revoked
    })
    this.deps.outbox.committed()
    return summary
  }

  /** The caller behind a bearer token, or undefined if it is not a live key of ours. */
  async authenticate(token: string): Promise<AuthContext | undefined> {
    // The checksum refuses mistyped and invented keys before any database work.
    if (!isWellFormedApiKey(token)) return undefined
    const store = this.deps.stores.read.apiKeys
    const row = await store.findByHashForAuthentication(hashApiKey(token))
    const now = this.deps.now()
    if (!row || row.revoked_at !== null || row.expires_at <= now) return undefined
    let lastUsed = row.last_used_at
    if (lastUsed === null || lastUsed < now - LAST_USED_RESOLUTION_MICROS) {
      await store.touch(row.tenant_id, row.id, now)
      lastUsed = now
    }
    const auth = credentialAuthContext(row, 'api_key', {
      perMinute: row.rate_limit_per_minute,
      key: `key:${row.id}`,
    })
    // Looked up again, and its use recorded, once the minute is up, even with a cached lookup.
    const touchDue = lastUsed + LAST_USED_RESOLUTION_MICROS + 1
    return { ...auth, lookUpAgainAt: Math.min(row.expires_at, touchDue) }
  }
}
