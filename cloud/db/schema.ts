/**
 * Table shapes as Kysely sees them. Times are integer microseconds since the epoch (shared/time.ts);
 * every tenant-owned table carries tenant_id (DESIGN.md §2, tenancy).
 */

export interface TenantsTable {
  id: string
  name: string
  time_zone: string
  /** How far back a punch may be dated, in days. */
  backfill_days: number
  /** The last `updated_at` handed out in this tenant: the per-tenant change clock. */
  last_change_us: number
  created_at: number
}

export interface ConsoleUsersTable {
  id: string
  tenant_id: string
  email: string
  password_hash: string
  role: string
  /** Set until the user replaces a generated password. */
  must_change_password: number
  created_at: number
}

export interface EmployeesTable {
  id: string
  tenant_id: string
  employee_code: string
  name: string
  email: string | null
  department: string | null
  location: string | null
  status: string
  created_at: number
  updated_at: number
}

export interface PunchesTable {
  id: string
  tenant_id: string
  employee_id: string
  employee_code: string
  punch_type: string
  punched_at: number
  received_at: number
  device_id: string | null
  source: string | null
  external_id: string | null
  /** Hash of what the client sent, to tell a retry of this punch from a different one reusing its externalId. */
  fingerprint: string
}

export interface IdempotencyKeysTable {
  tenant_id: string
  idempotency_key: string
  fingerprint: string
  response_status: number
  response_body: string
  created_at: number
}

export interface ApiKeysTable {
  id: string
  tenant_id: string
  name: string
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string
  /** The first characters of the key, to tell keys apart in lists and logs. */
  key_prefix: string
  scopes: string
  rate_limit_per_minute: number
  expires_at: number
  created_at: number
  revoked_at: number | null
  last_used_at: number | null
}

export interface OAuthAppsTable {
  id: string
  tenant_id: string
  name: string
  /** Public; generated (`hjc_...`) or chosen at creation. */
  client_id: string
  scopes: string
  rate_limit_per_minute: number
  created_at: number
  revoked_at: number | null
}

export interface OAuthClientSecretsTable {
  id: string
  tenant_id: string
  app_id: string
  /** SHA-256 of the secret, hex. */
  secret_hash: string
  secret_prefix: string
  created_at: number
  /** Null for the current secret; set on the old one when the secret is rotated. */
  expires_at: number | null
}

export interface OAuthTokensTable {
  id: string
  tenant_id: string
  app_id: string
  /** SHA-256 of the access token, hex. */
  token_hash: string
  scopes: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

export interface AuditLogTable {
  id: string
  tenant_id: string
  occurred_at: number
  /** Who did it: `cli:<os user>`, `console:<user id>`, `oauth_app:<app id>`. */
  actor: string
  action: string
  target_type: string
  target_id: string
  ip: string | null
  /** JSON with what else matters for this action (never a secret). */
  details: string | null
}

export interface Database {
  tenants: TenantsTable
  console_users: ConsoleUsersTable
  employees: EmployeesTable
  punches: PunchesTable
  idempotency_keys: IdempotencyKeysTable
  api_keys: ApiKeysTable
  oauth_apps: OAuthAppsTable
  oauth_client_secrets: OAuthClientSecretsTable
  oauth_tokens: OAuthTokensTable
  audit_log: AuditLogTable
}
