import type { Executor } from './db/executor.js'
import { AdminTokenStore } from './features/admin-tokens/store.js'
import { ApiKeyStore } from './features/api-keys/store.js'
import { AttendanceWorkStore } from './features/attendance/attendance-work-store.js'
import { AttendanceConfigStore } from './features/attendance/config-store.js'
import { CorrectionStore } from './features/attendance/correction-store.js'
import { DayStore } from './features/attendance/day-store.js'
import { AuditStore } from './features/audit/store.js'
import { DashboardStore } from './features/dashboard/store.js'
import { EmployeeStore } from './features/employees/store.js'
import { IdempotencyStore } from './features/idempotency/store.js'
import { OAuthAppStore } from './features/oauth/app-store.js'
import { TokenStore } from './features/oauth/token-store.js'
import { PunchStore } from './features/punches/store.js'
import { ConsoleSessionStore } from './features/sessions/store.js'
import { SignInThrottleStore } from './features/sign-in-throttle/store.js'
import { TenantStore } from './features/tenants/store.js'
import { ConsoleUserStore } from './features/users/store.js'
import { DeliveryStore } from './features/webhooks/delivery-store.js'
import { EndpointStore } from './features/webhooks/endpoint-store.js'
import { OutboxStore } from './features/webhooks/outbox-store.js'

/**
 * Every store of the cloud, bound to one executor (the database, or one transaction). Built only here,
 * in the composition layer; services see the ones they use through `UnitOfWork` (db/unit-of-work.ts).
 * Each store is made on first use, so a transaction that touches two stores builds two.
 */
export class Stores {
  #adminTokens?: AdminTokenStore
  #apiKeys?: ApiKeyStore
  #attendanceConfig?: AttendanceConfigStore
  #attendanceWork?: AttendanceWorkStore
  #corrections?: CorrectionStore
  #days?: DayStore
  #audit?: AuditStore
  #consoleSessions?: ConsoleSessionStore
  #consoleUsers?: ConsoleUserStore
  #dashboard?: DashboardStore
  #deliveries?: DeliveryStore
  #employees?: EmployeeStore
  #endpoints?: EndpointStore
  #idempotency?: IdempotencyStore
  #oauthApps?: OAuthAppStore
  #oauthTokens?: TokenStore
  #outbox?: OutboxStore
  #punches?: PunchStore
  #signInThrottle?: SignInThrottleStore
  #tenants?: TenantStore

  constructor(private readonly executor: Executor) {}

  get adminTokens(): AdminTokenStore {
    this.#adminTokens ??= new AdminTokenStore(this.executor)
    return this.#adminTokens
  }
  get apiKeys(): ApiKeyStore {
    this.#apiKeys ??= new ApiKeyStore(this.executor)
    return this.#apiKeys
  }
  get attendanceConfig(): AttendanceConfigStore {
    this.#attendanceConfig ??= new AttendanceConfigStore(this.executor)
    return this.#attendanceConfig
  }
  get attendanceWork(): AttendanceWorkStore {
    this.#attendanceWork ??= new AttendanceWorkStore(this.executor)
    return this.#attendanceWork
  }
  get corrections(): CorrectionStore {
    this.#corrections ??= new CorrectionStore(this.executor)
    return this.#corrections
  }
  get days(): DayStore {
    this.#days ??= new DayStore(this.executor)
    return this.#days
  }
  get audit(): AuditStore {
    this.#audit ??= new AuditStore(this.executor)
    return this.#audit
  }
  get consoleSessions(): ConsoleSessionStore {
    this.#consoleSessions ??= new ConsoleSessionStore(this.executor)
    return this.#consoleSessions
  }
  get consoleUsers(): ConsoleUserStore {
    this.#consoleUsers ??= new ConsoleUserStore(this.executor)
    return this.#consoleUsers
  }
  get dashboard(): DashboardStore {
    this.#dashboard ??= new DashboardStore(this.executor)
    return this.#dashboard
  }
  get deliveries(): DeliveryStore {
    this.#deliveries ??= new DeliveryStore(this.executor)
    return this.#deliveries
  }
  get employees(): EmployeeStore {
    this.#employees ??= new EmployeeStore(this.executor)
    return this.#employees
  }
  get endpoints(): EndpointStore {
    this.#endpoints ??= new EndpointStore(this.executor)
    return this.#endpoints
  }
  get idempotency(): IdempotencyStore {
    this.#idempotency ??= new IdempotencyStore(this.executor)
    return this.#idempotency
  }
  get oauthApps(): OAuthAppStore {
    this.#oauthApps ??= new OAuthAppStore(this.executor)
    return this.#oauthApps
  }
  get oauthTokens(): TokenStore {
    this.#oauthTokens ??= new TokenStore(this.executor)
    return this.#oauthTokens
  }
  get outbox(): OutboxStore {
    this.#outbox ??= new OutboxStore(this.executor)
    return this.#outbox
  }
  get punches(): PunchStore {
    this.#punches ??= new PunchStore(this.executor)
    return this.#punches
  }
  get signInThrottle(): SignInThrottleStore {
    this.#signInThrottle ??= new SignInThrottleStore(this.executor)
    return this.#signInThrottle
  }
  get tenants(): TenantStore {
    this.#tenants ??= new TenantStore(this.executor)
    return this.#tenants
  }
}
