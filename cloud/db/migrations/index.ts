import type { Migration } from 'kysely'
import * as initial from './0001-initial.js'
import * as oauthAndAudit from './0002-oauth-and-audit.js'
import * as auditLogSealed from './0003-audit-log-sealed.js'
import * as webhooks from './0004-webhooks.js'
import * as consoleSessions from './0005-console-sessions.js'
import * as consoleQueries from './0006-console-queries.js'
import * as webhookDueOrder from './0007-webhook-due-order.js'
import * as consoleUserEmailPerTenant from './0008-console-user-email-per-tenant.js'
import * as idempotencyCompact from './0009-idempotency-compact.js'
import * as attendance from './0010-attendance.js'

/**
 * Every migration, in order. Listed here rather than read from a folder so they work the same from
 * TypeScript sources (tests) and from the compiled dist/ (bins). Never edit one that has shipped:
 * add the next.
 */
export const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-oauth-and-audit': oauthAndAudit,
  '0003-audit-log-sealed': auditLogSealed,
  '0004-webhooks': webhooks,
  '0005-console-sessions': consoleSessions,
  '0006-console-queries': consoleQueries,
  '0007-webhook-due-order': webhookDueOrder,
  '0008-console-user-email-per-tenant': consoleUserEmailPerTenant,
  '0009-idempotency-compact': idempotencyCompact,
  '0010-attendance': attendance,
}
