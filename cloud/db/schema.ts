/**
 * Table shapes as Kysely sees them. Times are integer microseconds since the epoch (shared/time.ts);
 * every tenant-owned table carries tenant_id (docs/development/architecture.md#tenancy).
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
  last_sign_in_at: number | null
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
  /** The response as `response_encoding` says: 'json' (JSON text) or 'br' (Brotli, base64). */
  response_body: string
  response_encoding: string
  /** What stored it (`key:<id>` or `app:<id>`); null on rows older than the column. */
  credential: string | null
  /** Key, fingerprint and body as stored, in bytes: what the row counts against its credential. */
  stored_bytes: number
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
  /** Who did it: `cli:<os user>`, `console_user:<user id>`, `admin_token:<id>`, `oauth_app:<app id>`. */
  actor: string
  action: string
  target_type: string
  target_id: string
  ip: string | null
  /** JSON with what else matters for this action (never a secret). */
  details: string | null
}

export interface WebhookEndpointsTable {
  id: string
  tenant_id: string
  url: string
  description: string
  /** Space-separated event types; empty means every event. */
  events: string
  status: string
  disabled_reason: string | null
  failing_since: number | null
  created_at: number
  updated_at: number
  deleted_at: number | null
}

export interface WebhookSecretsTable {
  id: string
  tenant_id: string
  endpoint_id: string
  /** AES-256-GCM sealed `whsec_...` (cloud/db/secret-box.ts). */
  sealed_secret: string
  created_at: number
  expires_at: number | null
}

export interface WebhookEventsTable {
  id: string
  tenant_id: string
  type: string
  /** The JSON body as sent: `{type, timestamp, data}`. */
  body: string
  body_bytes: number
  /** Hex. */
  body_sha256: string
  endpoint_id: string | null
  created_at: number
  fanned_out: number
}

export interface WebhookDeliveriesTable {
  id: string
  tenant_id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_at: number | null
  next_trigger: string
  last_attempt_at: number | null
  claimed_until: number | null
  created_at: number
  updated_at: number
}

export interface WebhookAttemptsTable {
  id: string
  tenant_id: string
  delivery_id: string
  number: number
  trigger: string
  started_at: number
  duration_ms: number
  response_status: number | null
  response_body: string | null
  error: string | null
}

export interface AdminTokensTable {
  id: string
  tenant_id: string
  name: string
  token_hash: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

export interface ConsoleSessionsTable {
  /** SHA-256 of the cookie's secret, hex: the key. The secret itself is never stored. */
  token_hash: string
  tenant_id: string
  user_id: string
  csrf_token: string
  ip: string | null
  created_at: number
  last_seen_at: number
  expires_at: number
}

export interface ConsoleSignInFailuresTable {
  /** `email:<email>`, `pair:<ip address> <email>` or `ip:<ip address>`. */
  key: string
  failures: number
  window_started_at: number
  locked_until: number | null
}

export interface AttendanceShiftsTable {
  tenant_id: string
  code: string
  name: string | null
  start_time: string
  end_time: string
  unpaid_break_minutes: number
  early_window_minutes: number
  late_window_minutes: number
  late_grace_minutes: number
  early_exit_grace_minutes: number
  created_at: number
  updated_at: number
}

export interface AttendancePoliciesTable {
  id: string
  tenant_id: string
  /** '' for the tenant's own policy; else a department. */
  group_name: string
  settings: string
  version: number
  created_at: number
  updated_at: number
}

export interface AttendanceAssignmentsTable {
  id: string
  tenant_id: string
  /** '' unless the assignment is one employee's. */
  employee_code: string
  /** '' unless the assignment is a group's. */
  group_name: string
  shift_code: string
  effective_from: string
  effective_to: string | null
  created_at: number
  updated_at: number
}

export interface AttendanceHolidaysTable {
  id: string
  tenant_id: string
  holiday_date: string
  name: string
  group_name: string
  created_at: number
  updated_at: number
}

export interface AttendanceDaysTable {
  id: string
  tenant_id: string
  employee_code: string
  work_date: string
  status: string
  record: string
  revision: number
  scheduled_end: number
  final_at: number
  finalized_at: number | null
  locked_at: number | null
  punches_after_lock: number
  created_at: number
  updated_at: number
}

export interface AttendanceDirtyTable {
  tenant_id: string
  employee_code: string
  local_date: string
  queued_at: number
}

export interface PunchCorrectionsTable {
  tenant_id: string
  punch_id: string
  kind: string
  reason: string
  actor: string
  created_at: number
}

export interface AttendanceJobsTable {
  id: string
  tenant_id: string
  status: string
  from_date: string
  to_date: string
  employee_codes: string | null
  employees: number
  employees_done: number
  last_employee_code: string | null
  days_changed: number
  claimed_until: number | null
  error: string | null
  created_at: number
  finished_at: number | null
}

export interface AttendanceLocksTable {
  tenant_id: string
  from_date: string
  to_date: string
  locked_at: number
}

export interface AttendanceCalendarTable {
  tenant_id: string
  made_through: string
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
  webhook_endpoints: WebhookEndpointsTable
  webhook_secrets: WebhookSecretsTable
  webhook_events: WebhookEventsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
  admin_tokens: AdminTokensTable
  console_sessions: ConsoleSessionsTable
  console_sign_in_failures: ConsoleSignInFailuresTable
  attendance_shifts: AttendanceShiftsTable
  attendance_policies: AttendancePoliciesTable
  attendance_assignments: AttendanceAssignmentsTable
  attendance_holidays: AttendanceHolidaysTable
  attendance_days: AttendanceDaysTable
  attendance_dirty: AttendanceDirtyTable
  punch_corrections: PunchCorrectionsTable
  attendance_jobs: AttendanceJobsTable
  attendance_calendar: AttendanceCalendarTable
  attendance_locks: AttendanceLocksTable
}
