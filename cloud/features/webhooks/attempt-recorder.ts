import type { Kysely, Transaction } from 'kysely'
import { newId } from '../../../shared/ids.js'
import type { Database } from '../../db/schema.js'
import type { WebhookSettings } from '../../settings/webhook-settings.js'
import type { AuditService } from '../audit/service.js'
import { type DeliveryRow, DeliveryStore } from './delivery-store.js'
import { type EndpointRow, EndpointStore } from './endpoint-store.js'
import type { WebhookOutbox } from './outbox.js'
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

export interface AttemptRecorderOptions {
  db: Kysely<Database>
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
  constructor(private readonly options: AttemptRecorderOptions) {}

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
    return this.options.db.transaction().execute(async (trx): Promise<RecordedOutcome> => {
      const deliveries = new DeliveryStore(trx)
      const endpoints = new EndpointStore(trx)
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
      if (!owned) return { recorded: false }
      await deliveries.insertAttempt(delivery.tenant_id, {
        id: newId('webhookAttempt'),
        delivery_id: delivery.id,
        number,
        trigger: delivery.next_trigger,
        started_at: startedAt,
        duration_ms: result.durationMs,
        response_status: result.status,
        response_body: result.body,
        error: result.error,
      })
      const endpoint = await endpoints.get(delivery.tenant_id, delivery.endpoint_id)
      if (!endpoint) return { recorded: true, endpointActive: false }
      if (succeeded) {
        if (endpoint.failing_since !== null)
          await endpoints.update(delivery.tenant_id, delivery.endpoint_id, { failing_since: null }, at)
        // A pause or a deletion made meanwhile ends the endpoint's run.
        return { recorded: true, endpointActive: endpoint.status === 'active' }
      }
      await this.recordFailure(trx, endpoint, result, at)
      return { recorded: true, endpointActive: false }
    })
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
   */
  private async recordFailure(
    trx: Transaction<Database>,
    endpoint: EndpointRow,
    result: AttemptResult,
    at: number,
  ): Promise<void> {
    const endpoints = new EndpointStore(trx)
    const { tenant_id: tenantId, id: endpointId } = endpoint
    if (endpoint.status === 'disabled') return
    const failingSince = endpoint.failing_since ?? at
    if (endpoint.failing_since === null)
      await endpoints.update(tenantId, endpointId, { failing_since: at }, at)
    let reason: 'gone' | 'failing' | undefined
    let detail = ''
    if (result.status === 410) {
      reason = 'gone'
      detail = 'The endpoint answered 410 Gone.'
    } else if (at - failingSince >= this.options.settings.disableAfterSeconds * 1_000_000) {
      reason = 'failing'
      detail = `Every attempt failed for ${describeSpan(at - failingSince)}.`
    }
    if (!reason) return
    await endpoints.update(tenantId, endpointId, { status: 'disabled', disabled_reason: detail }, at)
    await this.options.audit.record(trx, tenantId, DISPATCHER, {
      action: 'webhook_endpoint.disabled',
      target: { type: 'webhook_endpoint', id: endpointId },
      details: { reason, detail },
    })
    await this.options.outbox.emit(trx, tenantId, [
      { type: 'webhook_endpoint.disabled', data: { endpointId, url: endpoint.url, reason, detail } },
    ])
    this.options.log.warn({ tenantId, endpointId, reason }, 'webhook endpoint disabled')
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
