import { nowMicros } from '../shared/time.js'
import type { AuthContext } from './auth/auth-context.js'
import type { DatabaseHandle } from './db/database.js'
import { unitOfWork } from './db/unit-of-work.js'
import { AdminTokenService } from './features/admin-tokens/service.js'
import { ApiKeyService } from './features/api-keys/service.js'
import { AttendanceQueue } from './features/attendance/attendance-queue.js'
import { AttendanceService } from './features/attendance/attendance-service.js'
import { AttendanceConfigService } from './features/attendance/config-service.js'
import { CorrectionService } from './features/attendance/correction-service.js'
import { DayRecomputer } from './features/attendance/day-recomputer.js'
import { AuditService } from './features/audit/service.js'
import { BearerAuthenticator } from './features/bearer-auth/bearer-authenticator.js'
import { CredentialCache } from './features/bearer-auth/credential-cache.js'
import { DashboardService } from './features/dashboard/service.js'
import { EmployeeService } from './features/employees/service.js'
import { IdempotencyService } from './features/idempotency/service.js'
import { OAuthAppService } from './features/oauth/app-service.js'
import { TokenService } from './features/oauth/token-service.js'
import { PunchService } from './features/punches/service.js'
import { ConsoleSessionService } from './features/sessions/service.js'
import { TenantService } from './features/tenants/service.js'
import { ConsoleOwnerAccounts } from './features/users/owner-accounts.js'
import { ConsoleUserService } from './features/users/service.js'
import { DeliveryService } from './features/webhooks/delivery-service.js'
import { EndpointService } from './features/webhooks/endpoint-service.js'
import { WebhookOutbox } from './features/webhooks/outbox.js'
import { WebhookUrlPolicy } from './features/webhooks/url-policy.js'
import type { CloudMetrics } from './metrics/cloud-metrics.js'
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './settings/webhook-settings.js'
import { Stores } from './stores.js'

export type Services = ReturnType<typeof createServices>

export interface ServiceOptions {
  now?: () => number
  webhooks?: WebhookSettings
  /** Bytes of stored Idempotency-Key responses one credential may keep (HAJRI_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL). */
  idempotencyMaxBytesPerCredential?: number
  /**
   * Queue the days new punches touch for the attendance engine (the default). Off only in the
   * benchmark that measures what the queue costs ingestion.
   */
  incrementalAttendance?: boolean
  /** Counts punches by outcome (the app's metrics); none by default. */
  metrics?: Pick<CloudMetrics, 'punch'>
}

/**
 * Every service of the cloud, wired to one database and one clock: the composition root shared by
 * the HTTP app, the CLI and the tests, so that each is built the same way everywhere.
 */
export function createServices(
  database: Pick<DatabaseHandle, 'db' | 'dialect' | 'transact' | 'secretBox' | 'watchChanges'>,
  options: ServiceOptions | (() => number) = {},
) {
  const {
    now = nowMicros,
    webhooks = DEFAULT_WEBHOOK_SETTINGS,
    idempotencyMaxBytesPerCredential,
    incrementalAttendance = true,
    metrics,
  }: ServiceOptions = typeof options === 'function' ? { now: options } : options
  const db = database.db
  // The one place transactions are opened: every service gets its stores through this.
  const stores = unitOfWork(db, database.transact, (executor) => new Stores(executor))
  const audit = new AuditService({ stores, now })
  const outbox = new WebhookOutbox(now)
  const attendanceQueue = new AttendanceQueue(now, incrementalAttendance)
  const idempotency = new IdempotencyService({
    stores,
    now,
    maxBytesPerCredential: idempotencyMaxBytesPerCredential,
  })
  const apiKeys = new ApiKeyService({ stores, audit, outbox, now })
  const tokens = new TokenService({ stores, audit, now })
  const urlPolicy = new WebhookUrlPolicy(webhooks.allowlist)
  // What a credential lookup reads (db/credential-table.ts, features/oauth/token-store.ts), but for
  // bookkeeping it does not act on: a key's last use (it bounds a cached lookup by lookUpAgainAt) and
  // a tenant's last change time, moved by every change to its directory and days
  // (docs/decisions/0093-sqlite-single-punch-checks-its-credential.md).
  const credentialChanges = database.watchChanges?.({
    api_keys: ['last_used_at'],
    oauth_tokens: [],
    oauth_apps: [],
    tenants: ['last_change_us'],
  })
  return {
    audit,
    adminTokens: new AdminTokenService({ stores, audit, now }),
    consoleSessions: new ConsoleSessionService({ stores, audit, now }),
    consoleUsers: new ConsoleUserService({ stores, audit, now }),
    outbox,
    idempotency,
    apiKeys,
    tokens,
    urlPolicy,
    oauthApps: new OAuthAppService({ stores, audit, outbox, now }),
    authenticator: new BearerAuthenticator({
      apiKeys,
      tokens,
      // On SQLite, told of every change (0092); on PostgreSQL, only where a punch's insert checks a
      // cached credential in its own statement (docs/decisions/0091-credential-cache-checked-by-the-write.md).
      cache:
        credentialChanges || stores.read.punches.insertsInOneStatement()
          ? new CredentialCache<AuthContext>({ clock: () => now() / 1000 })
          : undefined,
      changes: credentialChanges,
    }),
    tenants: new TenantService({ stores, owners: new ConsoleOwnerAccounts() }),
    employees: new EmployeeService({ stores, outbox, now }),
    punches: new PunchService({ stores, outbox, attendance: attendanceQueue, idempotency, now, metrics }),
    attendanceQueue,
    attendance: new AttendanceService({ stores, audit, now }),
    attendanceConfig: new AttendanceConfigService({ stores, audit, now }),
    corrections: new CorrectionService({
      stores,
      outbox,
      attendance: attendanceQueue,
      audit,
      idempotency,
      now,
    }),
    recomputer: new DayRecomputer({ stores, outbox, now }),
    webhookEndpoints: new EndpointService({
      stores,
      dialect: database.dialect,
      audit,
      outbox,
      secretBox: database.secretBox,
      policy: urlPolicy,
      maxEndpointsPerTenant: webhooks.maxEndpointsPerTenant,
      now,
    }),
    webhookDeliveries: new DeliveryService({ stores, audit, outbox, now }),
    /** The same stores, for the webhook dispatcher (app.ts), which runs beside the services. */
    stores,
    dashboard: new DashboardService({ stores, now }),
  }
}
