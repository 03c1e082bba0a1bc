/**
 * What a well-formed stored row is, table by table (no input may leave
 * a malformed record stored). The rules come from the schemas that validate what is written (shared/*.ts)
 * and from what the code that reads a row back relies on: ids with their kind's prefix, times in
 * plausible µs, enums, JSON that parses (and a webhook event's data that matches its documented
 * schema), hashes of the right length, and text without NUL, lone surrogates or, where a person
 * typed it, control characters. A row that breaks one would break a listing, an export, a
 * migration to PostgreSQL or a webhook consumer later, far from the request that stored it.
 */
import { createHash } from 'node:crypto'
import { isIP } from 'node:net'
import { brotliDecompressSync } from 'node:zlib'
import { compileCheck } from '../../cloud/validation.js'
import { DAY_STATUSES } from '../../shared/attendance.js'
import { CONSOLE_ROLES } from '../../shared/console-auth.js'
import { EMPLOYEE_CODE_PATTERN, EMPLOYEE_STATUSES } from '../../shared/employee.js'
import { ID_PREFIXES } from '../../shared/ids.js'
import { NO_CONTROL_CHARACTERS } from '../../shared/schema-helpers.js'
import { SCOPES } from '../../shared/scopes.js'
import { WEBHOOK_EVENTS, type WebhookEventType } from '../../shared/webhook-events.js'
import { DELIVERY_STATUSES, ENDPOINT_STATUSES } from '../../shared/webhooks.js'
import type { TableName } from './database-changes.js'

type Row = Record<string, unknown>

const YEAR = 365 * 86_400 * 1_000_000
/** 2020-01-01 in µs: nothing here is older. */
const FLOOR = Date.UTC(2020, 0, 1) * 1000
const HEX64 = /^[0-9a-f]{64}$/
const WALL_TIME = /^([01]\d|2[0-3]):[0-5]\d$/
/** A real `YYYY-MM-DD` calendar date. */
const calendarDate = (v: unknown) =>
  typeof v === 'string' &&
  /^\d{4}-\d{2}-\d{2}$/.test(v) &&
  new Date(`${v}T00:00:00Z`).toISOString().startsWith(v)
/** Any control character: the complement of shared/schema-helpers.ts NO_CONTROL_CHARACTERS. */
const PLAIN_TEXT = new RegExp(NO_CONTROL_CHARACTERS)
const CONTROL = { test: (text: string) => !PLAIN_TEXT.test(text) }
const PERSON_TEXT =
  (max: number, min = 0) =>
  (v: unknown) =>
    typeof v === 'string' && v.length >= min && v.length <= max && !CONTROL.test(v)

const idOf = (kind: keyof typeof ID_PREFIXES) => new RegExp(`^${ID_PREFIXES[kind]}_[0-9A-HJKMNP-TV-Z]{26}$`)
const matches = (pattern: RegExp) => (v: unknown) => typeof v === 'string' && pattern.test(v)
const oneOf = (values: readonly unknown[]) => (v: unknown) => values.includes(v)
const nullOr = (check: (v: unknown) => boolean) => (v: unknown) => v === null || check(v)
const integer = (min: number, max: number) => (v: unknown) =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max
/** A stored response compressed with Brotli, in base64, as text (undefined when it is not one). */
const decompressed = (v: unknown) => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) return undefined
  try {
    return brotliDecompressSync(Buffer.from(v, 'base64')).toString('utf8')
  } catch {
    return undefined
  }
}
const json = (v: unknown) => {
  if (typeof v !== 'string') return false
  try {
    JSON.parse(v)
    return true
  } catch {
    return false
  }
}
const scopes = (v: unknown) =>
  typeof v === 'string' && v.split(' ').every((s) => (SCOPES as readonly string[]).includes(s))
const eventTypes = (v: unknown) =>
  typeof v === 'string' && (v === '' || v.split(' ').every((t) => t in WEBHOOK_EVENTS))
const url = (v: unknown) => {
  if (typeof v !== 'string' || v.length > 2048) return false
  try {
    const parsed = new URL(v)
    return parsed.protocol === 'https:' || parsed.protocol === 'http:'
  } catch {
    return false
  }
}
const ip = nullOr((v) => typeof v === 'string' && isIP(v) !== 0)
const email = (v: unknown) => typeof v === 'string' && /^[^\s@]+@[^\s@]+$/.test(v) && !CONTROL.test(v)

type Rules = Record<string, (value: unknown, row: Row) => boolean>

/** µs times, from 2020 to a few years ahead (expiries are at most two years out). */
function time(now: () => number) {
  return (v: unknown) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= FLOOR && v <= now() + 3 * YEAR
}

function rulesFor(now: () => number): Record<TableName, Rules> {
  const at = time(now)
  const tenant = matches(idOf('tenant'))
  return {
    tenants: {
      id: tenant,
      name: PERSON_TEXT(200, 1),
      time_zone: (v) => {
        try {
          return (
            typeof v === 'string' &&
            new Intl.DateTimeFormat('en', { timeZone: v }).resolvedOptions().timeZone !== ''
          )
        } catch {
          return false
        }
      },
      backfill_days: integer(0, 3650),
      last_change_us: (v) => integer(0, now() + YEAR)(v),
      created_at: at,
    },
    console_users: {
      id: matches(idOf('consoleUser')),
      tenant_id: tenant,
      email: (v) => email(v) && (v as string).length <= 254,
      password_hash: matches(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/),
      role: oneOf(CONSOLE_ROLES),
      must_change_password: oneOf([0, 1, true, false]),
      created_at: at,
      last_sign_in_at: nullOr(at),
    },
    employees: {
      id: matches(idOf('employee')),
      tenant_id: tenant,
      employee_code: matches(new RegExp(EMPLOYEE_CODE_PATTERN)),
      name: PERSON_TEXT(200, 1),
      email: nullOr((v) => email(v) && (v as string).length <= 254),
      department: nullOr(PERSON_TEXT(100)),
      location: nullOr(PERSON_TEXT(100)),
      status: oneOf(EMPLOYEE_STATUSES),
      created_at: at,
      updated_at: (v, row) => at(v) && (v as number) >= (row.created_at as number),
    },
    punches: {
      id: matches(idOf('punch')),
      tenant_id: tenant,
      employee_id: matches(idOf('employee')),
      employee_code: matches(new RegExp(EMPLOYEE_CODE_PATTERN)),
      punch_type: oneOf(['IN', 'OUT']),
      // A tenant's backfill window is at most ten years; never more than five minutes ahead.
      punched_at: (v, row) =>
        integer(now() - 10 * YEAR, now() + 300_000_000)(v) &&
        (v as number) <= (row.received_at as number) + 300_000_000,
      received_at: at,
      device_id: nullOr(matches(/^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$/)),
      source: nullOr(matches(/^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$/)),
      external_id: nullOr(matches(/^[\x21-\x7E]{1,128}$/)),
      fingerprint: (v) => typeof v === 'string' && v.length > 0,
    },
    idempotency_keys: {
      tenant_id: tenant,
      idempotency_key: (v) => typeof v === 'string' && v.length > 0 && v.length <= 255 && !CONTROL.test(v),
      fingerprint: (v) => typeof v === 'string' && v.length > 0,
      response_status: integer(200, 599),
      response_body: (v, row) => json(row.response_encoding === 'br' ? decompressed(v) : v),
      response_encoding: oneOf(['json', 'br']),
      // Null only on rows stored before the column was added.
      credential: nullOr(
        matches(
          new RegExp(`^(key:${ID_PREFIXES.apiKey}|app:${ID_PREFIXES.oauthApp})_[0-9A-HJKMNP-TV-Z]{26}$`),
        ),
      ),
      stored_bytes: (v, row) =>
        integer(1, 2 ** 31 - 1)(v) &&
        (v as number) >=
          Buffer.byteLength(String(row.idempotency_key)) + Buffer.byteLength(String(row.response_body)),
      created_at: at,
    },
    api_keys: {
      id: matches(idOf('apiKey')),
      tenant_id: tenant,
      name: PERSON_TEXT(100, 1),
      key_hash: matches(HEX64),
      key_prefix: matches(/^hjk_[A-Za-z0-9]{1,16}$/),
      scopes,
      rate_limit_per_minute: integer(1, 100_000),
      expires_at: (v, row) => at(v) && (v as number) > (row.created_at as number),
      created_at: at,
      revoked_at: nullOr(at),
      last_used_at: nullOr(at),
    },
    oauth_apps: {
      id: matches(idOf('oauthApp')),
      tenant_id: tenant,
      name: PERSON_TEXT(100, 1),
      client_id: matches(/^[\x21-\x7E][\x20-\x7E]{6,126}[\x21-\x7E]$/),
      scopes,
      rate_limit_per_minute: integer(1, 100_000),
      created_at: at,
      revoked_at: nullOr(at),
    },
    oauth_client_secrets: {
      id: matches(idOf('clientSecret')),
      tenant_id: tenant,
      app_id: matches(idOf('oauthApp')),
      secret_hash: matches(HEX64),
      secret_prefix: (v) => typeof v === 'string' && v.length > 0 && !CONTROL.test(v),
      created_at: at,
      expires_at: nullOr(at),
    },
    oauth_tokens: {
      id: matches(idOf('accessToken')),
      tenant_id: tenant,
      app_id: matches(idOf('oauthApp')),
      token_hash: matches(HEX64),
      scopes: (v) => v === '' || scopes(v),
      created_at: at,
      expires_at: (v, row) => at(v) && (v as number) > (row.created_at as number),
      revoked_at: nullOr(at),
    },
    audit_log: {
      id: matches(idOf('auditEntry')),
      tenant_id: tenant,
      occurred_at: at,
      actor: (v) => typeof v === 'string' && v.length > 0 && v.length <= 300 && !CONTROL.test(v),
      action: matches(/^[a-z][a-z_]*\.[a-z][a-z_]*$/),
      target_type: matches(/^[a-z][a-z0-9_]{0,39}$/),
      target_id: (v) => typeof v === 'string' && v.length > 0 && v.length <= 300 && !CONTROL.test(v),
      ip,
      details: nullOr((v) => json(v) && typeof JSON.parse(v as string) === 'object'),
    },
    webhook_endpoints: {
      id: matches(idOf('webhookEndpoint')),
      tenant_id: tenant,
      url,
      description: PERSON_TEXT(500),
      events: eventTypes,
      status: oneOf(ENDPOINT_STATUSES),
      disabled_reason: nullOr((v) => typeof v === 'string' && !v.includes('\u0000')),
      failing_since: nullOr(at),
      created_at: at,
      updated_at: at,
      deleted_at: nullOr(at),
    },
    webhook_secrets: {
      id: matches(idOf('webhookSecret')),
      tenant_id: tenant,
      endpoint_id: matches(idOf('webhookEndpoint')),
      sealed_secret: (v) => typeof v === 'string' && v.length > 0,
      created_at: at,
      expires_at: nullOr(at),
    },
    webhook_events: {
      id: matches(idOf('webhookEvent')),
      tenant_id: tenant,
      type: (v) => typeof v === 'string' && v in WEBHOOK_EVENTS,
      body: (v, row) => eventBodyOk(v, row.type),
      body_bytes: (v, row) => typeof row.body === 'string' && v === Buffer.byteLength(row.body),
      body_sha256: (v, row) =>
        typeof row.body === 'string' && v === createHash('sha256').update(row.body).digest('hex'),
      endpoint_id: nullOr(matches(idOf('webhookEndpoint'))),
      created_at: at,
      fanned_out: oneOf([0, 1, true, false]),
    },
    webhook_deliveries: {
      id: matches(idOf('webhookDelivery')),
      tenant_id: tenant,
      endpoint_id: matches(idOf('webhookEndpoint')),
      event_id: matches(idOf('webhookEvent')),
      event_type: (v) => typeof v === 'string' && v in WEBHOOK_EVENTS,
      status: oneOf(DELIVERY_STATUSES),
      attempts: integer(0, 1000),
      next_attempt_at: nullOr(at),
      next_trigger: oneOf(['automatic', 'manual']),
      last_attempt_at: nullOr(at),
      claimed_until: nullOr(at),
      created_at: at,
      updated_at: at,
    },
    webhook_attempts: {
      id: matches(idOf('webhookAttempt')),
      tenant_id: tenant,
      delivery_id: matches(idOf('webhookDelivery')),
      number: integer(1, 1000),
      trigger: oneOf(['automatic', 'manual']),
      started_at: at,
      duration_ms: integer(0, 24 * 3_600_000),
      response_status: nullOr(integer(100, 599)),
      response_body: nullOr((v) => typeof v === 'string' && !v.includes('\u0000')),
      error: nullOr((v) => typeof v === 'string' && !v.includes('\u0000')),
    },
    admin_tokens: {
      id: matches(idOf('adminToken')),
      tenant_id: tenant,
      name: PERSON_TEXT(100, 1),
      token_hash: matches(HEX64),
      created_at: at,
      expires_at: (v, row) => at(v) && (v as number) > (row.created_at as number),
      revoked_at: nullOr(at),
    },
    console_sessions: {
      token_hash: matches(HEX64),
      tenant_id: tenant,
      user_id: matches(idOf('consoleUser')),
      csrf_token: (v) => typeof v === 'string' && v.length >= 16 && !CONTROL.test(v),
      ip,
      created_at: at,
      last_seen_at: at,
      expires_at: (v, row) => at(v) && (v as number) > (row.created_at as number),
    },
    console_sign_in_failures: {
      key: (v) =>
        typeof v === 'string' &&
        ((v.startsWith('email:') && v.length > 6) ||
          (v.startsWith('ip:') && isIP(v.slice(3)) !== 0) ||
          // `pair:<address> <email>` (sign-in-throttle.ts)
          (v.startsWith('pair:') &&
            isIP(v.slice(5, v.indexOf(' '))) !== 0 &&
            v.indexOf(' ') < v.length - 1)) &&
        !CONTROL.test(v),
      failures: integer(1, 1_000_000),
      window_started_at: at,
      locked_until: nullOr(at),
    },
    attendance_shifts: {
      tenant_id: tenant,
      code: matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/),
      name: nullOr(PERSON_TEXT(128)),
      start_time: matches(WALL_TIME),
      end_time: matches(WALL_TIME),
      unpaid_break_minutes: integer(0, 240),
      early_window_minutes: integer(0, 720),
      late_window_minutes: integer(0, 720),
      late_grace_minutes: integer(0, 240),
      early_exit_grace_minutes: integer(0, 240),
      created_at: at,
      updated_at: at,
    },
    attendance_policies: {
      id: matches(idOf('attendancePolicy')),
      tenant_id: tenant,
      group_name: PERSON_TEXT(128),
      settings: (v) => json(v) && typeof JSON.parse(v as string) === 'object',
      version: integer(1, 1_000_000),
      created_at: at,
      updated_at: at,
    },
    attendance_assignments: {
      id: matches(idOf('shiftAssignment')),
      tenant_id: tenant,
      employee_code: (v) => v === '' || matches(new RegExp(EMPLOYEE_CODE_PATTERN))(v),
      group_name: PERSON_TEXT(128),
      shift_code: matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/),
      effective_from: calendarDate,
      effective_to: nullOr(calendarDate),
      created_at: at,
      updated_at: at,
    },
    attendance_holidays: {
      id: matches(idOf('holiday')),
      tenant_id: tenant,
      holiday_date: calendarDate,
      name: PERSON_TEXT(128, 1),
      group_name: PERSON_TEXT(128),
      created_at: at,
      updated_at: at,
    },
    attendance_days: {
      id: matches(idOf('attendanceDay')),
      tenant_id: tenant,
      employee_code: matches(new RegExp(EMPLOYEE_CODE_PATTERN)),
      work_date: calendarDate,
      status: oneOf(DAY_STATUSES),
      record: (v) => json(v) && typeof JSON.parse(v as string) === 'object',
      revision: integer(1, 1_000_000_000),
      scheduled_end: integer(FLOOR - 20 * YEAR, now() + 3 * YEAR),
      final_at: integer(FLOOR - 20 * YEAR, now() + 3 * YEAR),
      finalized_at: nullOr(at),
      locked_at: nullOr(at),
      punches_after_lock: integer(0, 1_000_000),
      created_at: at,
      updated_at: at,
    },
    attendance_dirty: {
      tenant_id: tenant,
      employee_code: matches(new RegExp(EMPLOYEE_CODE_PATTERN)),
      local_date: calendarDate,
      queued_at: at,
    },
    punch_corrections: {
      tenant_id: tenant,
      punch_id: matches(idOf('punch')),
      kind: oneOf(['manual', 'void']),
      reason: PERSON_TEXT(500, 1),
      actor: (v) => typeof v === 'string' && v.length > 0 && v.length <= 300 && !CONTROL.test(v),
      created_at: at,
    },
    attendance_jobs: {
      id: matches(idOf('recomputeJob')),
      tenant_id: tenant,
      status: oneOf(['queued', 'running', 'done', 'failed']),
      from_date: calendarDate,
      to_date: calendarDate,
      employee_codes: nullOr((v) => json(v) && Array.isArray(JSON.parse(v as string))),
      employees: integer(0, 10_000_000),
      employees_done: integer(0, 10_000_000),
      last_employee_code: nullOr(matches(new RegExp(EMPLOYEE_CODE_PATTERN))),
      days_changed: integer(0, 1_000_000_000),
      claimed_until: nullOr(integer(FLOOR, now() + 3 * YEAR)),
      error: nullOr(PERSON_TEXT(500)),
      created_at: at,
      finished_at: nullOr(at),
    },
    attendance_calendar: {
      tenant_id: tenant,
      made_through: calendarDate,
    },
    attendance_locks: {
      tenant_id: tenant,
      from_date: calendarDate,
      to_date: (v, row) => calendarDate(v) && (v as string) >= (row.from_date as string),
      locked_at: at,
    },
  }
}

const eventChecks = new Map<string, ReturnType<typeof compileCheck>>()

/** `{type, timestamp, data}` (Standard Webhooks), data as the event catalog documents it. */
function eventBodyOk(body: unknown, type: unknown): boolean {
  if (typeof body !== 'string' || typeof type !== 'string' || !(type in WEBHOOK_EVENTS)) return false
  let parsed: { type?: unknown; timestamp?: unknown; data?: unknown }
  try {
    parsed = JSON.parse(body)
  } catch {
    return false
  }
  if (
    parsed.type !== type ||
    typeof parsed.timestamp !== 'string' ||
    Number.isNaN(Date.parse(parsed.timestamp))
  ) {
    return false
  }
  let check = eventChecks.get(type)
  if (!check) {
    check = compileCheck(WEBHOOK_EVENTS[type as WebhookEventType].data)
    eventChecks.set(type, check)
  }
  return check(parsed.data).ok
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Text that every store must be able to hold and every reader to print: no NUL, no lone surrogate. */
function storableText(value: unknown): boolean {
  return typeof value !== 'string' || (!value.includes('\u0000') && !LONE_SURROGATE.test(value))
}

/** Checks stored rows; `now` (µs) bounds the times. Each call gives one line per wrong column. */
export function rowChecker(now: () => number): (table: TableName, row: Row) => string[] {
  const all = rulesFor(now)
  return (table, row) => rowProblems(all[table], table, row)
}

function rowProblems(rules: Rules, table: TableName, row: Row): string[] {
  const problems: string[] = []
  for (const [column, value] of Object.entries(row)) {
    const show = JSON.stringify(value)?.slice(0, 120)
    if (!storableText(value)) problems.push(`${table}.${column}: text a store cannot hold (${show})`)
    const rule = rules[column]
    if (!rule) problems.push(`${table}.${column}: a column these checks do not know (${show})`)
    else if (!rule(value, row)) problems.push(`${table}.${column}: ${show}`)
  }
  for (const column of Object.keys(rules)) if (!(column in row)) problems.push(`${table}.${column}: missing`)
  return problems
}
