import {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  type AuditListQuery,
} from '../../../shared/audit.js'
import { isId, newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { NO_CONTROL_CHARACTERS } from '../../../shared/schema-helpers.js'
import { formatServerTime } from '../../../shared/time.js'
import type { Actor } from '../../auth/actor.js'
import { decodeCursor, readPage, resumeFilters } from '../../cursor.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import { timeFilter } from '../time-filter.js'
import type { AuditFilter, AuditRow, AuditStore } from './store.js'

export interface AuditEvent {
  action: AuditAction
  target: { type: string; id: string }
  /** Never a secret. */
  details?: Record<string, unknown>
}

// As the query schema has them: a cursor's values reach SQL, and PostgreSQL refuses NUL.
const PLAIN_TEXT = new RegExp(NO_CONTROL_CHARACTERS)
const isAuditText = (x: unknown) =>
  typeof x === 'string' && x.length > 0 && [...x].length <= 200 && PLAIN_TEXT.test(x)
const TARGET_TYPE = /^[a-z][a-z0-9_]{0,39}$/

/**
 * A cursor holds the filters it was made for (docs/development/architecture.md#paging) and the last entry
 * returned.
 */
type AuditCursor = AuditFilter & { beforeId: string }

function readCursor(v: Record<string, unknown>): AuditCursor | undefined {
  const { action, actor, targetType, targetId, from, to, beforeId } = v
  const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || ok(x)
  if (!isId('auditEntry', beforeId)) return undefined
  if (!optional(action, (x) => (AUDIT_ACTIONS as readonly unknown[]).includes(x))) return undefined
  if (!optional(actor, isAuditText) || !optional(targetId, isAuditText)) return undefined
  if (!optional(targetType, (x) => typeof x === 'string' && TARGET_TYPE.test(x))) return undefined
  if (!optional(from, Number.isSafeInteger) || !optional(to, Number.isSafeInteger)) return undefined
  return {
    action: action as string | undefined,
    actor: actor as string | undefined,
    targetType: targetType as string | undefined,
    targetId: targetId as string | undefined,
    from: from as number | undefined,
    to: to as number | undefined,
    beforeId,
  }
}

function toEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    occurredAt: formatServerTime(row.occurred_at),
    actor: row.actor,
    action: row.action as AuditAction,
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip,
    details: row.details === null ? {} : JSON.parse(row.details),
  }
}

/**
 * The append-only audit log (docs/decisions/0017-append-only-audit-log.md). Entries are written in the
 * transaction of the change.
 */
export class AuditService {
  constructor(private readonly deps: { stores: UnitOfWork<{ audit: AuditStore }>; now: () => number }) {}

  /** Records an entry through `store`: pass the transaction's, so the entry commits with the change. */
  async record(store: AuditStore, tenantId: string, actor: Actor, event: AuditEvent) {
    await store.insert(tenantId, {
      id: newId('auditEntry'),
      occurred_at: this.deps.now(),
      actor: actor.name,
      action: event.action,
      target_type: event.target.type,
      target_id: event.target.id,
      ip: actor.ip,
      details: event.details === undefined ? null : JSON.stringify(event.details),
    })
  }

  /**
   * Newest first, cursor-paged; filtered by action, actor, target and time (`from` inclusive, `to`
   * exclusive). The cursor carries the filters: a next page with other filters is refused.
   */
  async list(
    tenantId: string,
    query: AuditListQuery,
  ): Promise<{ data: AuditEntry[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let filter: AuditFilter = {
      action: query.action,
      actor: query.actor,
      targetType: query.targetType,
      targetId: query.targetId,
      from: timeFilter('from', query.from),
      to: timeFilter('to', query.to),
    }
    let beforeId: string | undefined
    if (query.cursor !== undefined) {
      const { beforeId: before, ...inCursor } = decodeCursor(query.cursor, readCursor)
      filter = resumeFilters(filter, inCursor)
      beforeId = before
    }
    const { rows, nextCursor } = await readPage(
      limit,
      (n) => this.deps.stores.read.audit.list(tenantId, { ...filter, beforeId, limit: n }),
      (last) => ({ ...filter, beforeId: last.id }) satisfies AuditCursor,
    )
    return { data: rows.map(toEntry), nextCursor }
  }
}
