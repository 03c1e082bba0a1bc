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
}
