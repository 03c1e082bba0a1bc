import { createHash } from 'node:crypto'
import { CoalescedCall } from '../../../shared/coalesced-call.js'
import { newId } from '../../../shared/ids.js'
import { formatServerTime } from '../../../shared/time.js'
import type { WebhookEventData, WebhookEventType } from '../../../shared/webhook-events.js'
import type { WebhookEventsTable } from '../../db/schema.js'
import type { OutboxStore } from './outbox-store.js'

export interface EmittedEvent<T extends WebhookEventType = WebhookEventType> {
  type: T
  data: WebhookEventData<T>
}

/**
 * Under load commits come hundreds a second, and a dispatcher round for each would take the CPU that
 * ingestion needs: the dispatcher is woken at most once in this many ms (the first commit after a
 * quiet spell at once), which is also the most a committed event waits for it.
 */
const WAKE_GAP_MS = 50

/**
 * The transactional outbox of webhook events (docs/decisions/0020-webhook-outbox.md): an event is a row
 * written in the same transaction as the change it reports, so none is lost when the process dies after the
 * change, and none is sent for a change that rolled back. The dispatcher fans events out to endpoints.
 * The body is fixed here, once, as every delivery of it will send it: `{type, timestamp, data}`.
 */
export class WebhookOutbox {
  private wakeDispatcher: () => void = () => {}
  private readonly wake = new CoalescedCall(() => this.wakeDispatcher(), WAKE_GAP_MS)

  constructor(private readonly now: () => number) {}

  /** The dispatcher, to be nudged when events may be waiting. */
  onWake(wake: () => void): void {
    this.wakeDispatcher = wake
  }

  /** Writes the events through `store`: pass the transaction's, so they commit with the change. */
  async emit(
    store: OutboxStore,
    tenantId: string,
    events: readonly EmittedEvent[],
    options: { endpointId?: string } = {},
  ): Promise<string[]> {
    if (events.length === 0) return []
    const rows = this.rows(tenantId, events, options)
    await store.insertEvents(rows)
    return rows.map((r) => r.id)
  }

  /**
   * The rows `emit` writes, for a caller that writes them itself in one statement with the change
   * (the single-punch path on PostgreSQL); it must call `committed` after, as with `emit`.
   */
  rows(
    tenantId: string,
    events: readonly EmittedEvent[],
    options: { endpointId?: string } = {},
  ): WebhookEventsTable[] {
    const now = this.now()
    const timestamp = formatServerTime(now)
    return events.map((event): WebhookEventsTable => {
      const body = JSON.stringify({ type: event.type, timestamp, data: event.data })
      return {
        id: newId('webhookEvent', Math.floor(now / 1000)),
        tenant_id: tenantId,
        type: event.type,
        body,
        body_bytes: Buffer.byteLength(body),
        body_sha256: createHash('sha256').update(body).digest('hex'),
        endpoint_id: options.endpointId ?? null,
        created_at: now,
        fanned_out: 0,
      }
    })
  }

  /** Call after the transaction that emitted events has committed: the dispatcher looks at once. */
  committed(): void {
    this.wake.request()
  }
}
