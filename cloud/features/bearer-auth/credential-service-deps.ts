import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import type { TenantStore } from '../tenants/store.js'
import type { WebhookOutbox } from '../webhooks/outbox.js'
import type { OutboxStore } from '../webhooks/outbox-store.js'

/**
 * The stores every change to a tenant's integration credentials uses besides the credential's own: the
 * tenant it is made for, the audit log it is recorded in, and the outbox it is announced through.
 */
export interface CredentialChangeStores {
  tenants: Pick<TenantStore, 'get'>
  audit: AuditStore
  outbox: OutboxStore
}

/**
 * What the services of a tenant's integration credentials (API keys, OAuth apps) are built with: the
 * common stores and those of the credential (`S`), the audit log and the webhook outbox that each
 * change is recorded and announced through, and the clock (µs).
 */
export interface CredentialServiceDeps<S> {
  stores: UnitOfWork<CredentialChangeStores & S>
  audit: AuditService
  outbox: WebhookOutbox
  now: () => number
}
