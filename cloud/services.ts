import { nowMicros } from '../shared/time.js'
import type { DatabaseHandle } from './db/database.js'
import { AuditService } from './features/audit/service.js'
import { BearerAuthenticator } from './features/credentials/authenticator.js'
import { ApiKeyService } from './features/credentials/service.js'
import { EmployeeService } from './features/employees/service.js'
import { IdempotencyService } from './features/idempotency/service.js'
import { OAuthAppService } from './features/oauth/app-service.js'
import { TokenService } from './features/oauth/token-service.js'
import { PunchService } from './features/punches/service.js'
import { TenantService } from './features/tenants/service.js'

export type Services = ReturnType<typeof createServices>

/**
 * Every service of the cloud, wired to one database and one clock: the composition root shared by
 * the HTTP app, the CLI and the tests, so that each is built the same way everywhere.
 */
export function createServices(
  database: Pick<DatabaseHandle, 'db' | 'transact'>,
  now: () => number = nowMicros,
) {
  const db = database.db
  const audit = new AuditService({ db, now })
  const idempotency = new IdempotencyService({ db, now })
  const apiKeys = new ApiKeyService({ db, audit, now })
  const tokens = new TokenService({ db, audit, now })
  return {
    audit,
    idempotency,
    apiKeys,
    tokens,
    oauthApps: new OAuthAppService({ db, audit, now }),
    authenticator: new BearerAuthenticator({ apiKeys, tokens }),
    tenants: new TenantService({ db }),
    employees: new EmployeeService({ db, now }),
    punches: new PunchService({ db, transact: database.transact, idempotency, now }),
  }
}
