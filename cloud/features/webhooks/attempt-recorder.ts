import { BatchedCall } from '../../../shared/batched-call.js'
import { newId } from '../../../shared/ids.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { WebhookSettings } from '../../settings/webhook-settings.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type { DeliveryRow, DeliveryStore, SuccessfulAttempt } from './delivery-store.js'
import type { EndpointRow, EndpointStore } from './endpoint-store.js'
import type { WebhookOutbox } from './outbox.js'
import type { OutboxStore } from './outbox-store.js'
import type { AttemptResult } from './webhook-sender.js'

/**
 * The longest a receiver's Retry-After may hold a delivery back: past it, the schedule's own step
 * rules, so a receiver answering `Retry-After: 99999999` cannot park a delivery for years.
 */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000
/** The actor of what the dispatcher does on its own (disabling an endpoint). */
const DISPATCHER = { name: 'system:webhooks', ip: null }

/** What became of an attempt once written. */
export type RecordedOutcome =
  /** Written; `endpointActive` says whether the endpoint may take the next delivery now. */
  | { recorded: true; endpointActive: boolean }
  /** The claim had passed to another dispatcher: nothing was written. */
  | { recorded: false }

/** The stores an attempt's outcome is written through. */
export interface AttemptStores {
  deliveries: Pick<
    DeliveryStore,
    'update' | 'insertAttempt' | 'recordsSuccessesInOneStatement' | 'recordSuccesses'
  >
  endpoints: Pick<EndpointStore, 'get' | 'update'>
  audit: AuditStore
  outbox: OutboxStore
}

/** Why the dispatcher disabled an endpoint. */
type DisableReason = 'gone' | 'failing'

export interface AttemptRecorderOptions {
  stores: UnitOfWork<AttemptStores>
  audit: AuditService
  outbox: WebhookOutbox
  settings: WebhookSettings
  log: { warn: (obj: object, msg: string) => void }
  random?: () => number
}

/**
 * Writes an attempt's outcome: its log entry and the delivery's next step (succeeded, a
 * retry per the schedule, exhausted), and for a failure whether the endpoint is now to be disabled,
 * all in one transaction, under the claim the attempt was made with.
 */
export class AttemptRecorder {
  /**
   * PostgreSQL: the successes of attempts that finish together (to different endpoints, of any
   * tenants) are written by one statement and one commit. Each attempt still waits for its own to
   * be written before its endpoint's next delivery is sent, as it would alone: the order of each
   * endpoint and what a crash may re-send are unchanged.
   */
  private readonly successes: BatchedCall<
    SuccessfulAttempt,
    { owned: boolean; endpointStatus: string | null }
  >

  constructor(private readonly options: AttemptRecorderOptions) {
    this.successes = new BatchedCall((batch) => options.stores.read.deliveries.recordSuccesses(batch))
  }

  async record(
    delivery: DeliveryRow,
    lease: number,
    result: AttemptResult,
    startedAt: number,
    at: number,
  ): Promise<RecordedOutcome> {
    const { settings } = this.options
    const number = delivery.attempts + 1
    const succeeded = result.status !== null && result.status >= 200 && result.status < 300
    const attempt = {
      id: newId('webhookAttempt'),
      number,
      trigger: delivery.next_trigger,
      started_at: startedAt,
      duration_ms: result.durationMs,
      response_status: result.status,
      response_body: result.body,
      error: result.error,
    }
    // A success, the common case, is one statement shared with the successes that finish with it
    // where the database can (one round trip rather than a transaction of five each); it writes
    // what the transaction below would.
    const written =
      succeeded && this.options.stores.read.deliveries.recordsSuccessesInOneStatement()
        ? await this.successes.call({ delivery, lease, attempt, at })
        : undefined
    if (written) {
      return written.owned
        ? { recorded: true, endpointActive: written.endpointStatus === 'active' }
        : { recorded: false }
    }
    type Written = { outcome: RecordedOutcome; disabled?: DisableReason | undefined }
    const { outcome, disabled } = await this.options.stores.transaction(async (s): Promise<Written> => {
      const { deliveries, endpoints } = s
      const exhausted = !succeeded && number >= settings.retrySchedule.length
      // The delivery's next step first, under its claim: the update locks the row, and tells whether
      // this dispatcher still owns it. Should the lease have run out and another instance have taken
      // the delivery over (a stalled process, a clock jump), nothing is written over the new owner's.
      const owned = await deliveries.update(
        delivery.tenant_id,
        delivery.id,
        {
          attempts: number,
          last_attempt_at: at,
          claimed_until: null,
          next_trigger: 'automatic',
          status: succeeded ? 'succeeded' : exhausted ? 'exhausted' : 'failed',
          next_attempt_at: succeeded || exhausted ? null : at + this.retryDelay(number, result),
        },
        at,
        lease,
      )
      if (!owned) return { outcome: { recorded: false } }
      await deliveries.insertAttempt(delivery.tenant_id, { ...attempt, delivery_id: delivery.id })
      const endpoint = await endpoints.get(delivery.tenant_id, delivery.endpoint_id)
      if (!endpoint) return { outcome: { recorded: true, endpointActive: false } }
      if (succeeded) {
        if (endpoint.failing_since !== null)
          await endpoints.update(delivery.tenant_id, delivery.endpoint_id, { failing_since: null }, at)
        // A pause or a deletion made meanwhile ends the endpoint's run.
        return { outcome: { recorded: true, endpointActive: endpoint.status === 'active' } }
      }
      const disabled = await this.recordFailure(s, endpoint, result, at)
      return { outcome: { recorded: true, endpointActive: false }, disabled }
    })
    // Told once it has committed: a transaction may run again (db/unit-of-work.ts).
    if (disabled) {
      const { tenant_id: tenantId, endpoint_id: endpointId } = delivery
      this.options.log.warn({ tenantId, endpointId, reason: disabled }, 'webhook endpoint disabled')
    }
    return outcome
  }

  /**
   * µs until the next attempt: the schedule's step, ±10 % jitter, no sooner than a Retry-After (up to
   * MAX_RETRY_AFTER_MS).
   */
  private retryDelay(attemptsMade: number, result: AttemptResult): number {
    const step = (this.options.settings.retrySchedule[attemptsMade] ?? 0) * 1_000_000
    const jitter = step * 0.1 * ((this.options.random ?? Math.random)() * 2 - 1)
    const retryAfter = Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS)
    return Math.max(Math.round(step + jitter), retryAfter * 1000)
  }

  /**
   * A failed attempt marks when the endpoint began failing; an endpoint that answers 410 Gone, or
   * has failed for disableAfter with no success, is disabled, with an event and an audit entry.
   * Returns why, if it disabled the endpoint.
   */
  private async recordFailure(
    s: AttemptStores,
    endpoint: EndpointRow,
    result: AttemptResult,
    atMicros: number,
  ): Promise<DisableReason | undefined> {
    const { endpoints } = s
    const { tenant_id: tenantId, id: endpointId } = endpoint
    if (endpoint.status === 'disabled') return undefined
    const failingSinceMicros = endpoint.failing_since ?? atMicros
    if (endpoint.failing_since === null)
      await endpoints.update(tenantId, endpointId, { failing_since: atMicros }, atMicros)
    let reason: DisableReason | undefined
    let detail = ''
    if (result.status === 410) {
      reason = 'gone'
      detail = 'The endpoint answered 410 Gone.'
    } else if (atMicros - failingSinceMicros >= this.options.settings.disableAfterSeconds * 1_000_000) {
      reason = 'failing'
      detail = `Every attempt failed for ${describeSpan(atMicros - failingSinceMicros)}.`
    }
    if (!reason) return undefined
    await endpoints.update(tenantId, endpointId, { status: 'disabled', disabled_reason: detail }, atMicros)
    await this.options.audit.record(s.audit, tenantId, DISPATCHER, {
      action: 'webhook_endpoint.disabled',
      target: { type: 'webhook_endpoint', id: endpointId },
      details: { reason, detail },
    })
    await this.options.outbox.emit(s.outbox, tenantId, [
      { type: 'webhook_endpoint.disabled', data: { endpointId, url: endpoint.url, reason, detail } },
    ])
    return reason
  }
}

/** A span of time for the admin reading why an endpoint was disabled: `5 days`, `2 seconds`. */
function describeSpan(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000)
  const units = [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ] as const
  const [unit, size] = units.find(([, size]) => seconds >= size) ?? units[3]
  const count = Math.floor(seconds / size)
  return `${count} ${unit}${count === 1 ? '' : 's'}`
}
