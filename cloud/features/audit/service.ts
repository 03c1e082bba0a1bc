import type { Kysely, Transaction } from 'kysely'
import type { AuditAction, AuditEntry, AuditListQuery } from '../../../shared/audit.js'
import { newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { formatServerTime } from '../../../shared/time.js'
import { decodeCursor, encodeCursor } from '../../cursor.js'
import type { Database } from '../../db/schema.js'
import { type AuditRow, AuditStore } from './store.js'

/** Who acted, and from where: passed down from the CLI, the console or an HTTP request. */
export interface Actor {
  /** `cli:<os user>`, `console:<user id>`, `oauth_app:<app id>`. */
  name: string
  ip: string | null
}

export interface AuditEvent {
  action: AuditAction
  target: { type: string; id: string }
  /** Never a secret. */
  details?: Record<string, unknown>
}

const AUDIT_ID = /^aud_[0-9A-HJKMNP-TV-Z]{26}$/

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

/** The append-only audit log (DESIGN.md §3). Entries are written in the transaction of the change. */
export class AuditService {
  constructor(private readonly deps: { db: Kysely<Database>; now: () => number }) {}

  async record(
    executor: Transaction<Database> | Kysely<Database>,
    tenantId: string,
    actor: Actor,
    event: AuditEvent,
  ) {
    await new AuditStore(executor).insert(tenantId, {
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

  /** Newest first, cursor-paged. */
  async list(
    tenantId: string,
    query: AuditListQuery,
  ): Promise<{ data: AuditEntry[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    const beforeId =
      query.cursor === undefined
        ? undefined
        : decodeCursor(query.cursor, (v) => (typeof v.b === 'string' && AUDIT_ID.test(v.b) ? v.b : undefined))
    const rows = await new AuditStore(this.deps.db).list(tenantId, {
      action: query.action,
      targetId: query.targetId,
      beforeId,
      limit: limit + 1,
    })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return {
      data: page.map(toEntry),
      nextCursor: rows.length > limit && last ? encodeCursor({ b: last.id }) : null,
    }
  }
}
