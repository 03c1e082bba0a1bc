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

export interface Database {
  tenants: TenantsTable
  console_users: ConsoleUsersTable
  employees: EmployeesTable
  punches: PunchesTable
  idempotency_keys: IdempotencyKeysTable
  api_keys: ApiKeysTable
}
