import type { AuthContext } from '../../auth/auth-context.js'
import type { TenantContext } from '../../auth/tenant-context.js'
import { parseScopes } from './credential-settings.js'

/** A credential row found by its secret, with its tenant's settings (db/credential-table.ts `WithTenant`). */
export interface CredentialWithTenant {
  tenant_id: string
  time_zone: string
  backfill_days: number
}

/** The tenant a presented credential belongs to, as requests know it. */
export function tenantOfCredential(row: CredentialWithTenant): TenantContext {
  return { id: row.tenant_id, timeZone: row.time_zone, backfillDays: row.backfill_days }
}

/**
 * The caller behind a live bearer credential of either kind (docs/decisions/0004-bearer-credentials-and-scopes.md):
 * its tenant, its stored scopes, and the per-minute limit it counts against (`key` names what the limit
 * counts: the API key itself, or the OAuth app all of whose tokens share one limit).
 */
export function credentialAuthContext(
  row: CredentialWithTenant & { id: string; scopes: string; expires_at: number },
  kind: AuthContext['credential']['kind'],
  rateLimit: { perMinute: number; key: string },
): AuthContext {
  return {
    tenant: tenantOfCredential(row),
    credential: {
      kind,
      id: row.id,
      scopes: parseScopes(row.scopes),
      rateLimitPerMinute: rateLimit.perMinute,
      rateLimitKey: rateLimit.key,
    },
    lookUpAgainAt: row.expires_at,
  }
}
