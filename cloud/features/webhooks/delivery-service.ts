import { isId } from '../../../shared/ids.js'
import { DEFAULT_PAGE_LIMIT } from '../../../shared/pagination.js'
import { formatServerTime, parseTimestamp } from '../../../shared/time.js'
import { isWebhookEventType, type WebhookEventType } from '../../../shared/webhook-events.js'
import {
  DELIVERY_STATUSES,
  type DeliveryListQuery,
  type DeliveryStatus,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
} from '../../../shared/webhooks.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import { decodeCursor, readPage, resumeFilters } from '../../cursor.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { timeFilter } from '../time-filter.js'
import type { DeliveryRow, DeliveryStore, PayloadMeta } from './delivery-store.js'
import type { EndpointStore } from './endpoint-store.js'
import type { WebhookOutbox } from './outbox.js'

/** The stores the delivery log uses. */
export interface DeliveryServiceStores {
  deliveries: DeliveryStore
  endpoints: Pick<EndpointStore, 'get'>
  audit: AuditStore
}

interface DeliveryFilter {
  endpointId: string | undefined
  status: DeliveryStatus | undefined
  eventType: WebhookEventType | undefined
  from: number | undefined
  to: number | undefined
}

/**
 * A cursor holds the filters it was made for (docs/development/architecture.md#paging) and the last delivery
 * returned.
 */
type DeliveryCursor = DeliveryFilter & { beforeId: string }

// Every value is checked against what we put in, since a cursor's values reach SQL.
function readCursor(v: Record<string, unknown>): { filter: DeliveryFilter; beforeId: string } | undefined {
  const { endpointId, status, eventType, from, to, beforeId } = v
  const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || ok(x)
  if (!isId('webhookDelivery', beforeId)) return undefined
  if (!optional(endpointId, (x) => isId('webhookEndpoint', x))) return undefined
  if (!optional(status, (x) => (DELIVERY_STATUSES as readonly unknown[]).includes(x))) return undefined
  if (!optional(eventType, (x) => typeof x === 'string' && isWebhookEventType(x))) return undefined
  if (!optional(from, Number.isSafeInteger) || !optional(to, Number.isSafeInteger)) return undefined
  return {
    filter: {
      endpointId: endpointId as string | undefined,
      status: status as DeliveryStatus | undefined,
      eventType: eventType as WebhookEventType | undefined,
      from: from as number | undefined,
      to: to as number | undefined,
    },
    beforeId,
  }
}

const formatted = (us: number | null) => (us === null ? null : formatServerTime(us))

function toDelivery(row: DeliveryRow & PayloadMeta): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    messageId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    nextAttemptAt: formatted(row.next_attempt_at),
    lastAttemptAt: formatted(row.last_attempt_at),
    payload: { size: row.body_bytes, sha256: row.body_sha256 },
    createdAt: formatServerTime(row.created_at),
  }
}

/** The delivery log: read, filtered and paged; a delivery retried, an endpoint's failures replayed. */
export class DeliveryService {
  constructor(
    private readonly deps: {
      stores: UnitOfWork<DeliveryServiceStores>
      audit: AuditService
      outbox: WebhookOutbox
      now: () => number
    },
  ) {}

  async list(
    tenantId: string,
    query: DeliveryListQuery,
  ): Promise<{ data: WebhookDelivery[]; nextCursor: string | null }> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT
    let filter: DeliveryFilter = {
      endpointId: query.endpointId,
      status: query.status,
      eventType: query.eventType,
      from: timeFilter('from', query.from),
      to: timeFilter('to', query.to),
    }
    let beforeId: string | undefined
    if (query.cursor !== undefined) {
      const cursor = decodeCursor(query.cursor, readCursor)
      filter = resumeFilters(filter, cursor.filter)
      beforeId = cursor.beforeId
    }
    const { rows, nextCursor } = await readPage(
      limit,
      (n) => this.deps.stores.read.deliveries.list(tenantId, { ...filter, beforeId, limit: n }),
      (last) => ({ ...filter, beforeId: last.id }) satisfies DeliveryCursor,
    )
    return { data: rows.map(toDelivery), nextCursor }
  }

  async show(tenantId: string, id: string): Promise<WebhookDeliveryDetail> {
    const store = this.deps.stores.read.deliveries
    const row = await store.get(tenantId, id)
    if (!row) throw new AppError('webhook_delivery_not_found', `No delivery ${id}.`)
    const attempts = await store.attempts(tenantId, id)
    return {
      ...toDelivery(row),
      body: row.body,
      attemptLog: attempts.map((a) => ({
        number: a.number,
        trigger: a.trigger as 'automatic' | 'manual',
        at: formatServerTime(a.started_at),
        durationMs: a.duration_ms,
        responseStatus: a.response_status,
        responseBody: a.response_body,
        error: a.error,
      })),
    }
  }

  /** One more attempt of a failed or exhausted delivery, now, recorded as manual. */
  async retry(tenantId: string, id: string, actor: Actor): Promise<WebhookDelivery> {
    const now = this.deps.now()
    const delivery = await this.deps.stores.transaction(async (s) => {
      const row = await s.deliveries.get(tenantId, id)
      if (!row) throw new AppError('webhook_delivery_not_found', `No delivery ${id}.`)
      if (row.status !== 'failed' && row.status !== 'exhausted') {
        throw new AppError(
          'webhook_delivery_not_retryable',
          `Delivery ${id} is ${row.status}: only a failed or exhausted delivery can be retried.`,
        )
      }
      // Deliveries to a deleted endpoint are never attempted: a retry would be accepted and never made.
      if (!(await s.endpoints.get(tenantId, row.endpoint_id))) {
        throw new AppError(
          'webhook_delivery_not_retryable',
          `Delivery ${id} cannot be retried: its endpoint ${row.endpoint_id} was deleted.`,
        )
      }
      if (!(await s.deliveries.scheduleManualAttempt(tenantId, id, now))) {
        throw new AppError(
          'webhook_delivery_not_retryable',
          `An attempt of delivery ${id} is in flight; retry it once that attempt has ended.`,
        )
      }
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'webhook_delivery.retried',
        target: { type: 'webhook_delivery', id },
        details: { endpointId: row.endpoint_id, messageId: row.event_id, previousStatus: row.status },
      })
      return toDelivery({ ...row, status: 'pending', next_attempt_at: now, next_trigger: 'manual' })
    })
    this.deps.outbox.committed()
    return delivery
  }

  /** Every failed or exhausted delivery of an endpoint created since `since`, attempted again now. */
  async replay(
    tenantId: string,
    endpointId: string,
    sinceText: string,
    actor: Actor,
  ): Promise<{ replayed: number }> {
    const since = parseTimestamp(sinceText)
    if (since === undefined) {
      throw new AppError('validation_failed', 'since: must be an RFC 3339 time with an offset', {
        errors: [{ in: 'body', pointer: '#/since', message: 'must be an RFC 3339 time with an offset' }],
      })
    }
    const now = this.deps.now()
    const replayed = await this.deps.stores.transaction(async (s) => {
      if (!(await s.endpoints.get(tenantId, endpointId))) {
        throw new AppError('webhook_endpoint_not_found', `No webhook endpoint ${endpointId}.`)
      }
      const failed = await s.deliveries.failedSince(tenantId, endpointId, since)
      // One with an attempt in flight is being tried already; its outcome would undo a replay.
      let scheduled = 0
      for (const row of failed) {
        if (await s.deliveries.scheduleManualAttempt(tenantId, row.id, now)) scheduled++
      }
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'webhook_delivery.replayed',
        target: { type: 'webhook_endpoint', id: endpointId },
        details: { since: formatServerTime(since), deliveries: scheduled },
      })
      return scheduled
    })
    this.deps.outbox.committed()
    return { replayed }
  }
}
