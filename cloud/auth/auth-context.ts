import type { Scope } from '../../shared/scopes.js'
import type { TenantContext } from './tenant-context.js'

/** Who is calling: set on the request by the auth plugin, passed to services as the tenant. */
export interface AuthContext {
  tenant: TenantContext
  credential: {
    kind: 'api_key' | 'oauth_token'
    /** The key's id, or the access token's. */
    id: string
    scopes: readonly Scope[]
    rateLimitPerMinute: number
    /** What the per-minute limit counts: the key, or the app all of whose tokens share one limit. */
    rateLimitKey: string
  }
  /**
   * When this lookup must be made again at the latest (microseconds since the epoch): the
   * credential's expiry, or when its last use is next due to be recorded. A cached lookup is not
   * reused past it.
   */
  lookUpAgainAt?: number
  /**
   * Set when the credential came from the cache of recent lookups rather than from the database on
   * this request: only a route whose write checks, in the same statement, that it is still live may
   * act on it (docs/decisions/0091-credential-cache-checked-by-the-write.md).
   */
  fromCache?: true
}

/**
 * What a write checks of a cached credential in its own statement: that the credential is still
 * live (neither revoked nor expired, nor its OAuth app revoked) and its tenant's settings are still
 * those the request was read with.
 */
export interface LiveCredentialCheck {
  kind: AuthContext['credential']['kind']
  id: string
  timeZone: string
  backfillDays: number
}

/** The check a write makes of `auth`, or undefined when it was looked up on this request. */
export function liveCredentialCheck(auth: AuthContext): LiveCredentialCheck | undefined {
  if (!auth.fromCache) return undefined
  const { kind, id } = auth.credential
  return { kind, id, timeZone: auth.tenant.timeZone, backfillDays: auth.tenant.backfillDays }
}
