import type { Kysely, Transaction } from 'kysely'
import {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEntry,
  type AuditListQuery,
} from '../../../shared/audit.js'
import { newId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { NO_CONTROL_CHARACTERS } from '../../../shared/schema-helpers.js'
import { formatServerTime, parseTimestamp } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import { assertSameFilter, decodeCursor, encodeCursor } from '../../cursor.js'
import type { Database } from '../../db/schema.js'
import { type AuditFilter, type AuditRow, AuditStore } from './store.js'

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
// As the query schema has them: a cursor's values reach SQL, and PostgreSQL refuses NUL.
const PLAIN_TEXT = new RegExp(NO_CONTROL_CHARACTERS)
const isAuditText = (x: unknown) =>
  typeof x === 'string' && x.length > 0 && [...x].length <= 200 && PLAIN_TEXT.test(x)
const TARGET_TYPE = /^[a-z][a-z0-9_]{0,39}$/

/** A cursor holds the filters it was made for (DESIGN.md §2) and the last entry returned. */
type AuditCursor = AuditFilter & { beforeId: string }

function readCursor(v: Record<string, unknown>): AuditCursor | undefined {
  const { action, actor, targetType, targetId, from, to, beforeId } = v
  const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || ok(x)
  if (typeof beforeId !== 'string' || !AUDIT_ID.test(beforeId)) return undefined
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

/**
 * A time filter, checked here too: the HTTP schema checks it first, but the CLI calls the service
 * directly, and a time that did not parse must be refused, not dropped (the list would be unfiltered).
 */
function time(name: 'from' | 'to', text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const us = parseTimestamp(text)
  if (us === undefined) {
    throw new AppError('validation_failed', `${name}: must be an RFC 3339 time with an offset`, {
      errors: [{ in: 'query', pointer: `#/${name}`, message: 'must be an RFC 3339 time with an offset' }],
    })
  }
  return us
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
      from: time('from', query.from),
      to: time('to', query.to),
    }
    let beforeId: string | undefined
    if (query.cursor !== undefined) {
      const { beforeId: before, ...inCursor } = decodeCursor(query.cursor, readCursor)
      for (const name of Object.keys(inCursor) as (keyof AuditFilter)[]) {
        assertSameFilter(name, filter[name], inCursor[name])
      }
      filter = inCursor
      beforeId = before
    }
    const rows = await new AuditStore(this.deps.db).list(tenantId, { ...filter, beforeId, limit: limit + 1 })
    const page = rows.slice(0, limit)
    const last = page.at(-1)
    return {
      data: page.map(toEntry),
      nextCursor:
        rows.length > limit && last
          ? encodeCursor({ ...filter, beforeId: last.id } satisfies AuditCursor)
          : null,
    }
  }
}
