import type { OAuthAppSummary } from '../../../shared/credentials.js'
import { newId } from '../../../shared/ids.js'
import type { Scope } from '../../../shared/scopes.js'
import { formatServerTime } from '../../../shared/time.js'
import { AppError } from '../../app-error.js'
import type { Actor } from '../../auth/actor.js'
import {
  CLIENT_SECRET,
  displayPrefix,
  generateSecret,
  hashSecret,
  randomBase62,
  secretMatches,
} from '../../auth/secret-format.js'
import { isUniqueViolation } from '../../db/unique-violation.js'
import type { CredentialServiceDeps } from '../bearer-auth/credential-service-deps.js'
import { checkCredentialSettings, parseScopes } from '../bearer-auth/credential-settings.js'
import { DEFAULT_ROTATION_GRACE_SECONDS, replaceSecrets, rotationGraceEnd } from '../secret-rotation.js'
import type { ClientForAuthentication, ClientSecretRow, OAuthAppRow, OAuthAppStore } from './app-store.js'

/**
 * After a rotation the old secret keeps working this long by default, so that an integrator can
 * roll the new one out to every system without an outage: a day covers a deployment window and a
 * time-zone round trip. It can be set per rotation, from 0 (cut over now) to 30 days.
 */

/**
 * A chosen client id: 8 to 128 printable ASCII characters, inner spaces allowed. Characters that
 * need form-encoding (space, +, %, :, &) are fine: clients encode them (RFC 6749 §2.3.1).
 */
const CLIENT_ID_PATTERN = /^[\x21-\x7E][\x20-\x7E]{6,126}[\x21-\x7E]$/

export interface CreateOAuthAppInput {
  name: string
  scopes: string[]
  rateLimitPerMinute?: number
  /**
   * Default: generated (`hjc_...`, 143 random bits: unguessable, and never anyone else's). Client
   * ids are unique across the server (RFC 6749 §2.2: the token endpoint knows a client by its id
   * alone), so only an operator, who sees every tenant, may choose one (the CLI's `--client-id`):
   * the console and admin-token routes do not take it, or one tenant could learn which ids another
   * uses (409 `client_id_taken`) and take ids another will want.
   */
  clientId?: string
}

export interface IssuedClientSecret {
  id: string
  clientId: string
  /** Shown once; only its SHA-256 is kept. */
  clientSecret: string
}

export interface RotatedClientSecret extends IssuedClientSecret {
  /** When the secrets in use before the rotation stop working. */
  previousSecretsExpireAt: string
}

/** An authenticated OAuth client: its app, and its tenant's context. */
export interface AuthenticatedClient {
  app: OAuthAppRow
  tenant: { id: string; timeZone: string; backfillDays: number }
  scopes: Scope[]
}

function toSummary(app: OAuthAppRow, secrets: ClientSecretRow[]): OAuthAppSummary {
  return {
    id: app.id,
    name: app.name,
    clientId: app.client_id,
    scopes: parseScopes(app.scopes),
    rateLimitPerMinute: app.rate_limit_per_minute,
    status: app.revoked_at === null ? 'active' : 'revoked',
    createdAt: formatServerTime(app.created_at),
    revokedAt: app.revoked_at === null ? null : formatServerTime(app.revoked_at),
    secrets: secrets
      .filter((s) => s.app_id === app.id)
      .map((s) => ({
        id: s.id,
        prefix: s.secret_prefix,
        createdAt: formatServerTime(s.created_at),
        expiresAt: s.expires_at === null ? null : formatServerTime(s.expires_at),
      })),
  }
}

/** Secret hashes compared per authentication at least: the current one and a rotated-out one. */
const COMPARED_SECRETS = 2
/** A hash no secret has (SHA-256 is never all zeros in practice): the padding of those comparisons. */
const NO_SECRET_HASH = '0'.repeat(64)

/**
 * OAuth apps for the client-credentials grant (docs/decisions/0016-oauth-client-credentials.md): created,
 * rotated and revoked by a tenant admin.
 */
export class OAuthAppService {
  constructor(private readonly deps: CredentialServiceDeps<{ oauthApps: OAuthAppStore }>) {}

  async create(tenantId: string, input: CreateOAuthAppInput, actor: Actor): Promise<IssuedClientSecret> {
    const clientId = input.clientId ?? `hjc_${randomBase62(24)}`
    const settings = checkCredentialSettings(
      input,
      CLIENT_ID_PATTERN.test(clientId)
        ? []
        : ['client id: must be 8 to 128 printable ASCII characters, without leading or trailing spaces'],
    )
    const id = newId('oauthApp')
    const now = this.deps.now()
    const clientSecret = generateSecret(CLIENT_SECRET)
    try {
      await this.deps.stores.transaction(async (s) => {
        if (!(await s.tenants.get(tenantId))) throw new AppError('tenant_not_found', `No tenant ${tenantId}.`)
        await s.oauthApps.insert(tenantId, {
          id,
          name: settings.name,
          client_id: clientId,
          scopes: settings.scopes.join(' '),
          rate_limit_per_minute: settings.rateLimitPerMinute,
          created_at: now,
          revoked_at: null,
        })
        const secret = this.secretRow(id, clientSecret, now)
        await s.oauthApps.insertSecret(tenantId, secret)
        await this.deps.audit.record(s.audit, tenantId, actor, {
          action: 'oauth_app.created',
          target: { type: 'oauth_app', id },
          details: {
            name: settings.name,
            clientId,
            scopes: settings.scopes,
            rateLimitPerMinute: settings.rateLimitPerMinute,
          },
        })
        const app = await s.oauthApps.get(tenantId, id)
        if (app) {
          const summary = toSummary(app, [{ ...secret, tenant_id: tenantId }])
          await this.deps.outbox.emit(s.outbox, tenantId, [{ type: 'oauth_app.created', data: summary }])
        }
      })
    } catch (err) {
      if (isUniqueViolation(err))
        throw new AppError('client_id_taken', `The client id ${clientId} is already in use.`)
      throw err
    }
    this.deps.outbox.committed()
    return { id, clientId, clientSecret }
  }

  /** One app as lists show it (the console shows a new app so, beside its secret). */
  async get(tenantId: string, id: string): Promise<OAuthAppSummary> {
    const store = this.deps.stores.read.oauthApps
    const app = await store.get(tenantId, id)
    if (!app) throw new AppError('oauth_app_not_found', `No OAuth app ${id}.`)
    const secrets = app.revoked_at === null ? await store.liveSecrets(tenantId, [id], this.deps.now()) : []
    return toSummary(app, secrets)
  }

  async list(tenantId: string): Promise<OAuthAppSummary[]> {
    const store = this.deps.stores.read.oauthApps
    const apps = await store.list(tenantId)
    const secrets = await store.liveSecrets(
      tenantId,
      apps.filter((a) => a.revoked_at === null).map((a) => a.id),
      this.deps.now(),
    )
    return apps.map((app) => toSummary(app, app.revoked_at === null ? secrets : []))
  }

  /** A new secret, at once; the ones in use keep working for `graceSeconds`, then stop. */
  async rotateSecret(
    tenantId: string,
    id: string,
    actor: Actor,
    graceSeconds = DEFAULT_ROTATION_GRACE_SECONDS,
  ) {
    const clientSecret = generateSecret(CLIENT_SECRET)
    const now = this.deps.now()
    const untilMicros = rotationGraceEnd(graceSeconds, now)
    return this.deps.stores.transaction(async (s): Promise<RotatedClientSecret> => {
      const app = await s.oauthApps.get(tenantId, id)
      if (!app || app.revoked_at !== null)
        throw new AppError('oauth_app_not_found', `No active OAuth app ${id}.`)
      const details = await replaceSecrets(
        s.oauthApps,
        tenantId,
        id,
        this.secretRow(id, clientSecret, now),
        untilMicros,
      )
      await this.deps.audit.record(s.audit, tenantId, actor, {
        action: 'oauth_app.secret_rotated',
        target: { type: 'oauth_app', id },
        details,
      })
      return {
        id,
        clientId: app.client_id,
        clientSecret,
        previousSecretsExpireAt: details.previousSecretsExpireAt,
      }
    })
  }

  /** Revokes the app: its secrets and every token issued to it stop working on the next request. */
  async revoke(tenantId: string, id: string, actor: Actor): Promise<OAuthAppSummary> {
    const now = this.deps.now()
    const summary = await this.deps.stores.transaction(async (s) => {
      const app = await s.oauthApps.get(tenantId, id)
      if (!app) throw new AppError('oauth_app_not_found', `No OAuth app ${id}.`)
      const revoked = toSummary({ ...app, revoked_at: app.revoked_at ?? now }, [])
      if (await s.oauthApps.revoke(tenantId, id, now)) {
        await this.deps.audit.record(s.audit, tenantId, actor, {
          action: 'oauth_app.revoked',
          target: { type: 'oauth_app', id },
          details: { name: app.name, clientId: app.client_id },
        })
        await this.deps.outbox.emit(s.outbox, tenantId, [{ type: 'oauth_app.revoked', data: revoked }])
      }
      return revoked
    })
    this.deps.outbox.committed()
    return summary
  }

  /**
   * The client behind a client id and secret, or undefined. Every live secret is compared, each in
   * constant time, so the time taken says nothing about how much of a secret was right.
   */
  async authenticateClient(clientId: string, clientSecret: string): Promise<AuthenticatedClient | undefined> {
    // A client id we could never have issued is not looked up (PostgreSQL refuses some, such as NUL).
    if (!CLIENT_ID_PATTERN.test(clientId)) return undefined
    const found: ClientForAuthentication | undefined =
      await this.deps.stores.read.oauthApps.findClientForAuthentication(clientId, this.deps.now())
    // The same comparisons whether the client exists or not, and however many secrets it has live
    // (one, or two while a rotation's grace period runs): the time taken tells nothing.
    const hashes = (found?.secrets ?? []).map((s) => s.secret_hash)
    while (hashes.length < COMPARED_SECRETS) hashes.push(NO_SECRET_HASH)
    let matched = false
    for (const hash of hashes) if (secretMatches(clientSecret, hash)) matched = true
    if (!found || !matched) return undefined
    return {
      app: found.app,
      tenant: { id: found.app.tenant_id, timeZone: found.time_zone, backfillDays: found.backfill_days },
      scopes: parseScopes(found.app.scopes),
    }
  }

  private secretRow(appId: string, secret: string, now: number): Omit<ClientSecretRow, 'tenant_id'> {
    return {
      id: newId('clientSecret'),
      app_id: appId,
      secret_hash: hashSecret(secret),
      secret_prefix: displayPrefix(CLIENT_SECRET, secret),
      created_at: now,
      expires_at: null,
    }
  }
}
