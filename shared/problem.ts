import { type Static, Type } from '@sinclair/typebox'

/** One wrong field of a request: where it is (a JSON pointer into that part) and what is wrong. */
export const FieldErrorSchema = Type.Object(
  {
    in: Type.Union([
      Type.Literal('body'),
      Type.Literal('query'),
      Type.Literal('path'),
      Type.Literal('header'),
    ]),
    pointer: Type.String({ description: 'RFC 6901 JSON pointer, as a URI fragment (`#/punchType`).' }),
    message: Type.String(),
  },
  { additionalProperties: false },
)

/** RFC 9457 problem details, with Hajri's stable `code` (docs/decisions/0007-rfc-9457-problems.md). */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI naming the problem type: `urn:hajri:problem:<code>`.' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.Optional(Type.String()),
    code: Type.String({ pattern: '^[a-z][a-z0-9_]*$', description: 'Stable, snake_case; match on this.' }),
    instance: Type.Optional(Type.String({ description: 'The request id, as `urn:hajri:request:<id>`.' })),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { title: 'Problem', description: 'RFC 9457 problem details (`application/problem+json`).' },
)

export type FieldError = Static<typeof FieldErrorSchema>
export type Problem = Static<typeof ProblemSchema>

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

export function problemType(code: string): string {
  return `urn:hajri:problem:${code}`
}

interface ProblemEntry {
  status: number
  title: string
  /** The code answered, where it is another entry's (a meaning of that code in one context). */
  code?: string
}

/**
 * Every problem Hajri returns, by stable code, with its status and title: the one table the cloud's
 * HTTP layer maps a code to its status by (docs/development/architecture.md#errors). Clients match on
 * `code`. Where one code means different things in different places, each meaning has its own entry
 * and answers under the shared code (`code`): an unknown employee is a 404 on GET, a 422 in a punch.
 */
export const PROBLEM_CATALOG = {
  bad_request: { status: 400, title: 'Bad request' },
  validation_failed: { status: 400, title: 'The request is not valid' },
  malformed_json: { status: 400, title: 'The body is not valid JSON' },
  invalid_csv: { status: 400, title: 'The CSV file cannot be read' },
  invalid_cursor: { status: 400, title: 'The cursor is not valid for this request' },
  invalid_idempotency_key: { status: 400, title: 'The Idempotency-Key header is not valid' },
  idempotency_key_not_supported: { status: 400, title: 'This request does not honour Idempotency-Key' },
  invalid_host: { status: 400, title: 'The Host header is not valid' },
  authentication_required: { status: 401, title: 'Authentication required' },
  invalid_credential: { status: 401, title: 'The credential is not valid' },
  insufficient_scope: { status: 403, title: 'The credential lacks the scope this needs' },
  insufficient_role: { status: 403, title: 'Your role does not allow this' },
  invalid_credentials: { status: 401, title: 'The email or password is wrong' },
  session_expired: { status: 401, title: 'The session has expired or was ended; sign in again' },
  csrf_failed: { status: 403, title: 'The request failed the cross-site request forgery check' },
  password_change_required: { status: 403, title: 'Choose a new password before anything else' },
  current_password_incorrect: { status: 403, title: 'The current password is wrong' },
  origin_refused: { status: 403, title: 'Requests from web pages are refused here' },
  browser_origin_forbidden: {
    status: 403,
    title: 'Credentials must not be used from a browser',
  },
  not_found: { status: 404, title: 'Not found' },
  tenant_not_found: { status: 404, title: 'Tenant not found' },
  employee_not_found: { status: 404, title: 'Employee not found' },
  // A punch naming an unknown employee cannot be processed (RFC 9110 §15.5.21), though nothing the
  // request addressed is missing; clients have always seen it as `employee_not_found`.
  punch_employee_not_found: { status: 422, title: 'Employee not found', code: 'employee_not_found' },
  punch_not_found: { status: 404, title: 'Punch not found' },
  api_key_not_found: { status: 404, title: 'API key not found' },
  attendance_day_not_found: { status: 404, title: 'No attendance day for this employee and date' },
  shift_not_found: { status: 404, title: 'Shift not found' },
  attendance_policy_not_found: { status: 404, title: 'Attendance policy not found' },
  shift_assignment_not_found: { status: 404, title: 'Shift assignment not found' },
  holiday_not_found: { status: 404, title: 'Holiday not found' },
  recompute_job_not_found: { status: 404, title: 'Recompute job not found' },
  oauth_app_not_found: { status: 404, title: 'OAuth app not found' },
  webhook_endpoint_not_found: { status: 404, title: 'Webhook endpoint not found' },
  webhook_delivery_not_found: { status: 404, title: 'Webhook delivery not found' },
  console_user_not_found: { status: 404, title: 'Console user not found' },
  webhook_delivery_not_retryable: {
    status: 409,
    title: 'Only a failed or exhausted delivery can be retried',
  },
  client_id_taken: { status: 409, title: 'This client id is already in use' },
  webhook_endpoint_limit_reached: {
    status: 409,
    title: 'The tenant has as many webhook endpoints as it may have',
  },
  console_user_exists: { status: 409, title: 'A console user with this email already exists' },
  last_owner: { status: 409, title: 'A tenant keeps at least one owner' },
  shift_exists: { status: 409, title: 'A shift with this code already exists' },
  shift_in_use: { status: 409, title: 'The shift is assigned; delete its assignments first' },
  attendance_policy_exists: { status: 409, title: 'This group already has a policy' },
  holiday_exists: { status: 409, title: 'This date is already a holiday for this group' },
  days_not_final: { status: 409, title: 'Some days in the period are not final yet' },
  recompute_jobs_busy: { status: 409, title: 'The tenant already has recompute jobs waiting' },
  punch_already_voided: { status: 409, title: 'The punch is already voided' },
  day_locked: { status: 409, title: 'The punch belongs to a day payroll has locked' },
  payload_too_large: { status: 413, title: 'The body is too large' },
  uri_too_long: { status: 414, title: 'A path parameter is too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  host_not_allowed: { status: 421, title: 'This server does not answer for that host name' },
  idempotency_key_reused: {
    status: 422,
    title: 'This Idempotency-Key was already used with a different request',
  },
  external_id_reused: { status: 422, title: 'This externalId was already used for a different punch' },
  employee_not_active: { status: 422, title: 'The employee is not active' },
  punched_at_in_future: { status: 422, title: 'The punch time is in the future' },
  punched_at_too_old: { status: 422, title: "The punch time is before the tenant's backfill window" },
  rate_limited: { status: 429, title: 'Too many requests' },
  idempotency_storage_full: {
    status: 429,
    title: 'This credential has as many stored Idempotency-Key responses as it may keep',
  },
  login_locked: { status: 429, title: 'Too many failed sign-ins; try again later' },
  internal_error: { status: 500, title: 'Internal error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
} as const satisfies Record<string, ProblemEntry>

export type ProblemCode = keyof typeof PROBLEM_CATALOG

/** The HTTP status a problem code is answered with. */
export function problemStatus(code: ProblemCode): number {
  return PROBLEM_CATALOG[code].status
}

/** The code clients see for a problem code: its own, or the one it shares. */
export function answeredCode(code: ProblemCode): string {
  const entry: ProblemEntry = PROBLEM_CATALOG[code]
  return entry.code ?? code
}
