import { newId } from '../../../shared/ids.js'
import {
  ACCESS_TOKEN_TTL_SECONDS,
  type IntrospectionResponse,
  type TokenResponse,
} from '../../../shared/oauth.js'
import type { AuthContext } from '../../auth/auth-context.js'
import { ACCESS_TOKEN, generateSecret, hashSecret, isWellFormedSecret } from '../../auth/secret-format.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { credentialAuthContext } from '../bearer-auth/credential-auth-context.js'
import type { AuthenticatedClient } from './app-service.js'
import { OAuthError } from './oauth-error.js'
import type { TokenStore } from './token-store.js'

/** Expired tokens are kept this long for audit correlation, then purged. */
const EXPIRED_TOKEN_RETENTION_MICROS = 7 * 86_400 * 1_000_000

/** RFC 6749 §3.3: scope is a space-delimited list. */
function requestedScopes(scope: string | undefined, client: AuthenticatedClient): string[] {
  if (scope === undefined) return client.scopes
  const wanted = [...new Set(scope.split(' ').filter((s) => s !== ''))]
  if (wanted.length === 0)
    throw new OAuthError('invalid_scope', 'scope is empty; leave it out to get all of the app’s scopes.')
  const extra = wanted.filter((s) => !(client.scopes as string[]).includes(s))
  if (extra.length > 0) throw new OAuthError('invalid_scope', `Not granted to this app: ${extra.join(' ')}.`)
  return wanted
}

/** The stores access tokens use. */
export interface TokenStores {
  oauthTokens: TokenStore
  audit: AuditStore
}

/**
 * Opaque access tokens (docs/decisions/0016-oauth-client-credentials.md): issued to clients, checked on
 * every API request, revocable.
 */
export class TokenService {
  constructor(
    private readonly deps: { stores: UnitOfWork<TokenStores>; audit: AuditService; now: () => number },
  ) {}

  /** RFC 6749 §4.4.3: a token for the client, with the requested subset of its scopes. */
  async issue(
    client: AuthenticatedClient,
    scope: string | undefined,
    ip: string | null,
  ): Promise<TokenResponse> {
    const scopes = requestedScopes(scope, client)
    const token = generateSecret(ACCESS_TOKEN)
    const now = this.deps.now()
    const id = newId('accessToken')
    await this.deps.stores.transaction(async (s) => {
      await s.oauthTokens.insert(client.tenant.id, {
        id,
        app_id: client.app.id,
        token_hash: hashSecret(token),
        scopes: scopes.join(' '),
        created_at: now,
        expires_at: now + ACCESS_TOKEN_TTL_SECONDS * 1_000_000,
        revoked_at: null,
      })
      await this.deps.audit.record(
        s.audit,
        client.tenant.id,
        { name: `oauth_app:${client.app.id}`, ip },
        {
          action: 'oauth_token.issued',
          target: { type: 'oauth_token', id },
          details: { clientId: client.app.client_id, scopes },
        },
      )
    })
    return {
      access_token: token,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      scope: scopes.join(' '),
    }
  }

  /**
   * RFC 7009: revokes one of the client's own tokens. An unknown or malformed token is not an error
   * (§2.2: the client could do nothing about it); another client's token is refused (§2.1).
   */
  async revoke(client: AuthenticatedClient, token: string, ip: string | null): Promise<void> {
    if (!isWellFormedSecret(ACCESS_TOKEN, token)) return
    await this.deps.stores.transaction(async (s) => {
      const row = await s.oauthTokens.findByHashForAuthentication(hashSecret(token))
      if (!row) return
      if (row.app_id !== client.app.id) {
        throw new OAuthError('unauthorized_client', 'This token was not issued to this client.')
      }
      if (await s.oauthTokens.revoke(row.tenant_id, row.id, this.deps.now())) {
        await this.deps.audit.record(
          s.audit,
          row.tenant_id,
          { name: `oauth_app:${client.app.id}`, ip },
          {
            action: 'oauth_token.revoked',
            target: { type: 'oauth_token', id: row.id },
            details: { clientId: row.client_id },
          },
        )
      }
    })
  }

  /** RFC 7662: what a token is, told only to the client it was issued to; anything else is inactive. */
  async introspect(
    client: AuthenticatedClient,
    token: string,
    issuer: string,
  ): Promise<IntrospectionResponse> {
    if (!isWellFormedSecret(ACCESS_TOKEN, token)) return { active: false }
    const row = await this.deps.stores.read.oauthTokens.findByHashForAuthentication(hashSecret(token))
    const now = this.deps.now()
    if (!row || row.app_id !== client.app.id || !isLive(row, now)) return { active: false }
    return {
      active: true,
      scope: row.scopes,
      client_id: row.client_id,
      token_type: 'Bearer',
      exp: Math.floor(row.expires_at / 1_000_000),
      iat: Math.floor(row.created_at / 1_000_000),
      sub: row.app_id,
      iss: issuer,
    }
  }

  /** The caller behind a bearer access token, or undefined if it is not live. */
  async authenticate(token: string): Promise<AuthContext | undefined> {
    if (!isWellFormedSecret(ACCESS_TOKEN, token)) return undefined
    const row = await this.deps.stores.read.oauthTokens.findByHashForAuthentication(hashSecret(token))
    if (!row || !isLive(row, this.deps.now())) return undefined
    return credentialAuthContext(row, 'oauth_token', {
      perMinute: row.app_rate_limit_per_minute,
      key: `app:${row.app_id}`,
    })
  }

  async purgeExpired(): Promise<number> {
    return this.deps.stores.read.oauthTokens.purgeExpired(this.deps.now() - EXPIRED_TOKEN_RETENTION_MICROS)
  }
}

function isLive(
  row: { revoked_at: number | null; app_revoked_at: number | null; expires_at: number },
  now: number,
) {
  return row.revoked_at === null && row.app_revoked_at === null && row.expires_at > now
}
