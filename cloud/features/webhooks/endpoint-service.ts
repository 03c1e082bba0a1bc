import type { Kysely, Transaction } from 'kysely'
import { newId } from '../../../shared/ids.js'
import { NO_CONTROL_CHARACTERS } from '../../../shared/schema-helpers.js'
import { formatServerTime } from '../../../shared/time.js'
import { isWebhookEventType, type WebhookEventType } from '../../../shared/webhook-events.js'
import type { WebhookEndpoint, WebhookEndpointInput } from '../../../shared/webhooks.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import type { RunInTransaction } from '../../db/group-commit.js'
import type { Database } from '../../db/schema.js'
import type { SecretBox } from '../../db/secret-box.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../settings/webhook-settings.js'
import type { AuditService } from '../audit/service.js'
import { type EndpointRow, type EndpointSecretRow, EndpointStore } from './endpoint-store.js'
import { fanOutEvents } from './fan-out.js'
import type { WebhookOutbox } from './outbox.js'
import type { WebhookUrlPolicy } from './url-policy.js'
import { generateSigningSecret } from './webhook-sender.js'

/** After a rotation the old secret still signs for this long unless chosen otherwise (0 to 30 days). */
export const DEFAULT_SECRET_GRACE_SECONDS = 24 * 3600
const MAX_SECRET_GRACE_SECONDS = 30 * 86_400
const FAN_OUT_BATCH = 500

/** Where a secret sealed for an endpoint may be opened: that endpoint's row only. */
export const secretContext = (endpointId: string) => `webhook_secret:${endpointId}`

export function toEndpoint(row: EndpointRow, secrets: readonly EndpointSecretRow[]): WebhookEndpoint {
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

/**
 * Webhook endpoints: registered, changed, paused and resumed, tested, their secrets rotated and
 * shown (docs/decisions/0042-webhook-event-and-endpoint-semantics.md).
 */
export class EndpointService {
  constructor(
    private readonly deps: {
      db: Kysely<Database>
      /** Every change runs through it: on PostgreSQL it retries a transaction that lost a deadlock. */
      transact: RunInTransaction
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
    await this.deps.transact(async (trx) => {
      await this.settlePendingEvents(trx, tenantId, now)
      const store = new EndpointStore(trx)
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
      await this.deps.audit.record(trx, tenantId, actor, {
        action: 'webhook_endpoint.created',
        target: { type: 'webhook_endpoint', id },
        details: { url, events: row.events === '' ? [] : row.events.split(' ') },
      })
    })
    this.deps.outbox.committed()
    return {
      endpoint: toEndpoint({ ...row, tenant_id: tenantId }, [{ ...secretRow, tenant_id: tenantId }]),
      secret,
    }
  }

  async list(tenantId: string): Promise<WebhookEndpoint[]> {
    const store = new EndpointStore(this.deps.db)
    const now = this.deps.now()
    const rows = await store.list(tenantId)
    return Promise.all(
      rows.map(async (row) => toEndpoint(row, await store.liveSecrets(tenantId, row.id, now))),
    )
  }

  async get(tenantId: string, id: string): Promise<WebhookEndpoint> {
    const store = new EndpointStore(this.deps.db)
    return toEndpoint(
      await this.row(store, tenantId, id),
      await store.liveSecrets(tenantId, id, this.deps.now()),
    )
  }

  async update(
    tenantId: string,
    id: string,
    changes: { url?: string; events?: WebhookEventType[]; description?: string },
    actor: Actor,
  ): Promise<WebhookEndpoint> {
    this.checkFields(changes)
    const url = changes.url === undefined ? undefined : this.checkUrl(changes.url)
    const refilter = changes.events !== undefined
    const endpoint = await this.change(
      tenantId,
      id,
      actor,
      'webhook_endpoint.updated',
      () => ({
        ...(url !== undefined ? { url } : {}),
        ...(changes.events !== undefined ? { events: [...new Set(changes.events)].join(' ') } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
      }),
      { settle: refilter },
    )
    if (refilter) this.deps.outbox.committed()
    return endpoint
  }

  /** Deliveries wait while paused, and go, in order, on resume. */
  pause(tenantId: string, id: string, actor: Actor): Promise<WebhookEndpoint> {
    return this.change(tenantId, id, actor, 'webhook_endpoint.paused', () => ({ status: 'paused' }))
  }

  /** Also re-enables a disabled endpoint: an admin says the receiver is fixed. */
  async resume(tenantId: string, id: string, actor: Actor): Promise<WebhookEndpoint> {
    const endpoint = await this.change(
      tenantId,
      id,
      actor,
      'webhook_endpoint.resumed',
      () => ({ status: 'active', disabled_reason: null, failing_since: null }),
      // A disabled endpoint gets no event emitted while it was disabled, however late the fan-out.
      { settle: true },
    )
    this.deps.outbox.committed()
    return endpoint
  }

  async remove(tenantId: string, id: string, actor: Actor): Promise<void> {
    await this.change(tenantId, id, actor, 'webhook_endpoint.deleted', (now) => ({ deleted_at: now }))
  }

  /** A new secret at once; the ones in use keep signing (side by side) for the grace period. */
  async rotateSecret(
    tenantId: string,
    id: string,
    actor: Actor,
    graceSeconds = DEFAULT_SECRET_GRACE_SECONDS,
  ): Promise<{ secret: string; previousSecretsExpireAt: string }> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_SECRET_GRACE_SECONDS) {
      throw new AppError('validation_failed', 'grace: must be from 0 seconds to 30 days')
    }
    const now = this.deps.now()
    const secret = generateSigningSecret()
    const until = now + graceSeconds * 1_000_000
    await this.deps.transact(async (trx) => {
      const store = new EndpointStore(trx)
      await this.row(store, tenantId, id)
      await store.expireSecrets(tenantId, id, until)
      const row = this.sealed(id, secret, now)
      await store.insertSecret(tenantId, row)
      await this.deps.audit.record(trx, tenantId, actor, {
        action: 'webhook_endpoint.secret_rotated',
        target: { type: 'webhook_endpoint', id },
        details: { newSecretId: row.id, previousSecretsExpireAt: formatServerTime(until) },
      })
    })
    return { secret, previousSecretsExpireAt: formatServerTime(until) }
  }

  /** The current signing secret, shown again to an admin: an audited act. */
  async revealSecret(tenantId: string, id: string, actor: Actor): Promise<{ secret: string }> {
    return this.deps.transact(async (trx) => {
      const store = new EndpointStore(trx)
      await this.row(store, tenantId, id)
      const current = (await store.liveSecrets(tenantId, id, this.deps.now())).find(
        (s) => s.expires_at === null,
      )
      if (!current) throw new AppError('webhook_endpoint_not_found', `Endpoint ${id} has no current secret.`)
      await this.deps.audit.record(trx, tenantId, actor, {
        action: 'webhook_endpoint.secret_revealed',
        target: { type: 'webhook_endpoint', id },
        details: { secretId: current.id },
      })
      return { secret: this.deps.secretBox().open(current.sealed_secret, secretContext(id)) }
    })
  }

  /** Sends the test event to this endpoint only (even a paused one gets it once resumed). */
  async sendTest(tenantId: string, id: string, actor: Actor): Promise<{ messageId: string }> {
    const [messageId] = await this.deps.transact(async (trx) => {
      await this.row(new EndpointStore(trx), tenantId, id)
      await this.deps.audit.record(trx, tenantId, actor, {
        action: 'webhook_endpoint.test_sent',
        target: { type: 'webhook_endpoint', id },
      })
      return this.deps.outbox.emit(
        trx,
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
  private async settlePendingEvents(trx: Transaction<Database>, tenantId: string, now: number) {
    // PostgreSQL: wait for the events a dispatcher (or another change) holds, locking them in id
    // order, before this change locks the endpoint's row (see fanOutEvents for the order).
    const lock = this.deps.dialect === 'postgres' ? 'wait' : 'none'
    let taken: number
    do {
      taken = await fanOutEvents(trx, { now, limit: FAN_OUT_BATCH, lock, tenantId })
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

  private async row(store: EndpointStore, tenantId: string, id: string): Promise<EndpointRow> {
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
    changes: (now: number) => Parameters<EndpointStore['update']>[2],
    options: { settle?: boolean } = {},
  ): Promise<WebhookEndpoint> {
    const now = this.deps.now()
    return this.deps.transact(async (trx: Transaction<Database>) => {
      const store = new EndpointStore(trx)
      const before = await this.row(store, tenantId, id)
      if (options.settle) await this.settlePendingEvents(trx, tenantId, now)
      const change = changes(now)
      await store.update(tenantId, id, change, now)
      await this.deps.audit.record(trx, tenantId, actor, {
        action,
        target: { type: 'webhook_endpoint', id },
        details: { before: { url: before.url, status: before.status, events: before.events }, ...change },
      })
      return toEndpoint({ ...before, ...change, updated_at: now }, await store.liveSecrets(tenantId, id, now))
    })
  }
}
