import { newId } from '../../../shared/ids.js'
import { NO_CONTROL_CHARACTERS } from '../../../shared/schema-helpers.js'
import { formatServerTime } from '../../../shared/time.js'
import { isWebhookEventType, type WebhookEventType } from '../../../shared/webhook-events.js'
import type { WebhookEndpoint, WebhookEndpointInput } from '../../../shared/webhooks.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { SecretBox } from '../../db/secret-box.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../settings/webhook-settings.js'
import type { AuditEvent, AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { DEFAULT_ROTATION_GRACE_SECONDS, replaceSecrets, rotationGraceEnd } from '../secret-rotation.js'
import type { EndpointChanges, EndpointRow, EndpointSecretRow, EndpointStore } from './endpoint-store.js'
import { type FanOutStores, fanOutEvents } from './fan-out.js'
import type { WebhookOutbox } from './outbox.js'
import type { OutboxStore } from './outbox-store.js'
import type { WebhookUrlPolicy } from './url-policy.js'
import { generateSigningSecret } from './webhook-sender.js'

/** After a rotation the old secret still signs for this long unless chosen otherwise (0 to 30 days). */
const FAN_OUT_BATCH = 500

/** The stores webhook endpoints use; an endpoint change fans out the events emitted before it. */
export interface EndpointServiceStores extends FanOutStores {
  endpoints: EndpointStore
  audit: AuditStore
  outbox: OutboxStore
}

/** Where a secret sealed for an endpoint may be opened: that endpoint's row only. */
export const secretContext = (endpointId: string) => `webhook_secret:${endpointId}`

function toEndpoint(row: EndpointRow, secrets: readonly EndpointSecretRow[]): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events === '' ? [] : (row.events.split(' ') as WebhookEventType[]),
    status: row.status as WebhookEndpoint['status'],
    disabledReason: row.disabled_reason,
    failingSince: row.failing_since === null ? null : formatServerTime(row.failing_since),
    secrets: secrets.map((s) => ({
      id: s.id,
      createdAt: formatServerTime(s.created_at),
      expiresAt: s.expires_at === null ? null : formatServerTime(s.expires_at),
    })),
    createdAt: formatServerTime(row.created_at),
    updatedAt: formatServerTime(row.updated_at),
  }
}

/** An endpoint as shown, with the secrets that sign its deliveries at `nowMicros`. */
async function withSecrets(
  store: Pick<EndpointStore, 'liveSecrets'>,
  row: EndpointRow,
  nowMicros: number,
): Promise<WebhookEndpoint> {
  return toEndpoint(row, await store.liveSecrets(row.tenant_id, row.id, nowMicros))
}

/**
 * Webhook endpoints: registered, changed, paused and resumed, tested, their secrets rotated and
 * shown (docs/decisions/0042-webhook-event-and-endpoint-semantics.md).
 */
export class EndpointService {
  constructor(
    private readonly deps: {
      /** Every change runs in its transaction: on PostgreSQL one that lost a deadlock is run again. */
      stores: UnitOfWork<EndpointServiceStores>
      /** PostgreSQL locks the events an endpoint change settles; SQLite has one writer. */
      dialect: 'sqlite' | 'postgres'
      audit: AuditService
      outbox: WebhookOutbox
      secretBox: () => SecretBox
      policy: WebhookUrlPolicy
      /** Live endpoints one tenant may have (HAJRI_WEBHOOK_MAX_ENDPOINTS). */
      maxEndpointsPerTenant?: number
      now: () => number
    },
  ) {}

  /** The same rules as the HTTP schema, for callers that do not pass through it (the CLI). */
  private checkFields(input: {
    events?: readonly string[] | undefined
    description?: string | undefined
  }): void {
    const errors = []
    const unknown = (input.events ?? []).filter((e) => !isWebhookEventType(e))
    if (unknown.length > 0) {
      errors.push({
        pointer: '#/events',
        message: `unknown event types: ${unknown.join(', ')} (see GET /api/public/v1/webhook-event-types)`,
      })
    }
    if ((input.events?.length ?? 0) > 50)
      errors.push({ pointer: '#/events', message: 'at most 50 event types' })
    if ((input.description?.length ?? 0) > 500)
      errors.push({ pointer: '#/description', message: 'at most 500 characters' })
    if (input.description !== undefined && !new RegExp(NO_CONTROL_CHARACTERS).test(input.description)) {
      errors.push({ pointer: '#/description', message: 'no control characters' })
    }
    if (errors.length > 0) {
      throw new AppError(
        'validation_failed',
        errors.map((e) => `${e.pointer.slice(2)}: ${e.message}`).join('; '),
        {
          errors: errors.map((e) => ({ in: 'body' as const, ...e })),
        },
      )
    }
  }

  private checkUrl(url: string): string {
    const checked = this.deps.policy.check(url)
    if (!checked.ok) {
      throw new AppError('validation_failed', `url ${checked.reason}.`, {
        errors: [{ in: 'body', pointer: '#/url', message: checked.reason }],
      })
    }
    return checked.url.toString()
  }

  async create(
    tenantId: string,
    input: WebhookEndpointInput,
    actor: Actor,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    this.checkFields(input)
    const url = this.checkUrl(input.url)
    const now = this.deps.now()
    const id = newId('webhookEndpoint')
    const secret = generateSigningSecret()
    const row = {
      id,
      url,
      description: input.description ?? '',
      events: [...new Set(input.events ?? [])].join(' '),
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    }
    const secretRow = this.sealed(id, secret, now)
    await this.deps.stores.transaction(async (s) => {
      await this.settlePendingEvents(s, tenantId, now)
      const store = s.endpoints
      // Every endpoint takes a share of the dispatcher's slots and work at each event: a tenant's
      // number of them is bounded, checked under a lock so concurrent registrations cannot overshoot.
      if (this.deps.dialect === 'postgres') await store.lockTenantRegistrations(tenantId)
      const cap = this.deps.maxEndpointsPerTenant ?? DEFAULT_WEBHOOK_SETTINGS.maxEndpointsPerTenant
      if ((await store.countLive(tenantId)) >= cap) {
        throw new AppError(
          'webhook_endpoint_limit_reached',
          `A tenant may have at most ${cap} webhook endpoints; delete one before registering another.`,
        )
      }
      await store.insert(tenantId, row)
      await store.insertSecret(tenantId, secretRow)
      await this.audit(s, tenantId, actor, id, 'webhook_endpoint.created', {
        url,
        events: row.events === '' ? [] : row.events.split(' '),
      })
    })
    this.deps.outbox.committed()
    return {
      endpoint: toEndpoint({ ...row, tenant_id: tenantId }, [{ ...secretRow, tenant_id: tenantId }]),
      secret,
    }
  }

  async list(tenantId: string): Promise<WebhookEndpoint[]> {
    const store = this.deps.stores.read.endpoints
    const now = this.deps.now()
    const rows = await store.list(tenantId)
    return Promise.all(rows.map((row) => withSecrets(store, row, now)))
  }

  async get(tenantId: string, id: string): Promise<WebhookEndpoint> {
    const store = this.deps.stores.read.endpoints
    return withSecrets(store, await this.row(store, tenantId, id), this.deps.now())
  }

  async update(
    tenantId: string,
    id: string,
    changes: { url?: string; events?: WebhookEventType[]; description?: string },
    actor: Actor,
  ): Promise<WebhookEndpoint> {
    this.checkFields(changes)
    const url = changes.url === undefined ? undefined : this.checkUrl(changes.url)
    return this.change(
      tenantId,
      id,
      actor,
      'webhook_endpoint.updated',
      () => ({
        ...(url !== undefined ? { url } : {}),
        ...(changes.events !== undefined ? { events: [...new Set(changes.events)].join(' ') } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
      }),
      { settle: changes.events !== undefined },
    )
  }

  /** Deliveries wait while paused, and go, in order, on resume. */
  pause(tenantId: string, id: string, actor: Actor): Promise<WebhookEndpoint> {
    return this.change(tenantId, id, actor, 'webhook_endpoint.paused', () => ({ status: 'paused' }))
  }

  /** Also re-enables a disabled endpoint: an admin says the receiver is fixed. */
  resume(tenantId: string, id: string, actor: Actor): Promise<WebhookEndpoint> {
    return this.change(
      tenantId,
      id,
      actor,
      'webhook_endpoint.resumed',
      () => ({ status: 'active', disabled_reason: null, failing_since: null }),
      // A disabled endpoint gets no event emitted while it was disabled, however late the fan-out.
      { settle: true },
    )
  }

  async remove(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.change(tenantId, id, actor, 'webhook_endpoint.deleted', (now) => ({ deleted_at: now }))
  }

  /** A new secret at once; the ones in use keep signing (side by side) for the grace period. */
  async rotateSecret(
    tenantId: string,
    id: string,
    actor: Actor,
    graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
  ): Promise<{ secret: string; previousSecretsExpireAt: string }> {
    const now = this.deps.now()
    const untilMicros = rotationGraceEnd(graceSeconds, now)
    const secret = generateSigningSecret()
    const details = await this.deps.stores.transaction(async (s) => {
      await this.row(s.endpoints, tenantId, id)
      const rotated = await replaceSecrets(
        s.endpoints,
        tenantId,
        id,
        this.sealed(id, secret, now),
        untilMicros,
      )
      await this.audit(s, tenantId, actor, id, 'webhook_endpoint.secret_rotated', rotated)
      return rotated
    })
    return { secret, previousSecretsExpireAt: details.previousSecretsExpireAt }
  }

  /** The current signing secret, shown again to an admin: an audited act. */
  async revealSecret(tenantId: string, id: string, actor: Actor): Promise<{ secret: string }> {
    return this.deps.stores.transaction(async (s) => {
      await this.row(s.endpoints, tenantId, id)
      const current = (await s.endpoints.liveSecrets(tenantId, id, this.deps.now())).find(
        (secret) => secret.expires_at === null,
      )
      if (!current) throw new AppError('webhook_endpoint_not_found', `Endpoint ${id} has no current secret.`)
      await this.audit(s, tenantId, actor, id, 'webhook_endpoint.secret_revealed', { secretId: current.id })
      return { secret: this.deps.secretBox().open(current.sealed_secret, secretContext(id)) }
    })
  }

  /** Sends the test event to this endpoint only (even a paused one gets it once resumed). */
  async sendTest(tenantId: string, id: string, actor: Actor): Promise<{ messageId: string }> {
    const [messageId] = await this.deps.stores.transaction(async (s) => {
      await this.row(s.endpoints, tenantId, id)
      await this.audit(s, tenantId, actor, id, 'webhook_endpoint.test_sent')
      return this.deps.outbox.emit(
        s.outbox,
        tenantId,
        [
          {
            type: 'webhook.test',
            data: {
              message: 'A test event from Hajri: if its signature verifies, this endpoint is ready.',
              endpointId: id,
              requestedBy: actor.name,
            },
          },
        ],
        { endpointId: id },
      )
    })
    this.deps.outbox.committed()
    return { messageId: messageId as string }
  }

  /**
   * Before a change to who gets which events: makes the deliveries of the tenant's events emitted so
   * far, by the endpoints as they are, so that the change applies from now on only. Otherwise the
   * dispatcher's fan-out, a moment or (when it lags) much later, would go by the changed endpoints:
   * a new one would get events from before it existed, a new filter events from before it was set.
   */
  private async settlePendingEvents(s: EndpointServiceStores, tenantId: string, nowMicros: number) {
    // PostgreSQL: wait for the events a dispatcher (or another change) holds, locking them in id
    // order, before this change locks the endpoint's row (see fanOutEvents for the order).
    const lock = this.deps.dialect === 'postgres' ? 'wait' : 'none'
    let taken: number
    do {
      taken = await fanOutEvents(s, { nowMicros, limit: FAN_OUT_BATCH, lock, tenantId })
    } while (taken === FAN_OUT_BATCH)
  }

  private sealed(endpointId: string, secret: string, now: number): Omit<EndpointSecretRow, 'tenant_id'> {
    return {
      id: newId('webhookSecret'),
      endpoint_id: endpointId,
      sealed_secret: this.deps.secretBox().seal(secret, secretContext(endpointId)),
      created_at: now,
      expires_at: null,
    }
  }

  /** An audit entry of an act on endpoint `id`, written in the transaction of `s`. */
  private audit(
    s: EndpointServiceStores,
    tenantId: string,
    actor: Actor,
    id: string,
    action: AuditEvent['action'],
    details?: AuditEvent['details'],
  ): Promise<void> {
    return this.deps.audit.record(s.audit, tenantId, actor, {
      action,
      target: { type: 'webhook_endpoint', id },
      details,
    })
  }

  private async row(store: Pick<EndpointStore, 'get'>, tenantId: string, id: string): Promise<EndpointRow> {
    const row = await store.get(tenantId, id)
    if (!row) throw new AppError('webhook_endpoint_not_found', `No webhook endpoint ${id}.`)
    return row
  }

  private async change(
    tenantId: string,
    id: string,
    actor: Actor,
    action:
      | 'webhook_endpoint.updated'
      | 'webhook_endpoint.paused'
      | 'webhook_endpoint.resumed'
      | 'webhook_endpoint.deleted',
    changes: (nowMicros: number) => EndpointChanges,
    /** Settle the events emitted before the change first (see settlePendingEvents). */
    options: { settle?: boolean } = {},
  ): Promise<WebhookEndpoint> {
    const now = this.deps.now()
    const endpoint = await this.deps.stores.transaction(async (s) => {
      const before = await this.row(s.endpoints, tenantId, id)
      if (options.settle) await this.settlePendingEvents(s, tenantId, now)
      const change = changes(now)
      await s.endpoints.update(tenantId, id, change, now)
      await this.audit(s, tenantId, actor, id, action, {
        before: { url: before.url, status: before.status, events: before.events },
        ...change,
      })
      return withSecrets(s.endpoints, { ...before, ...change, updated_at: now }, now)
    })
    // The deliveries the settling made are the dispatcher's to send.
    if (options.settle) this.deps.outbox.committed()
    return endpoint
  }
}
