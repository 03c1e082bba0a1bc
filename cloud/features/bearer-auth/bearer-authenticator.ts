import type { AuthContext } from '../../auth/auth-context.js'
import { ACCESS_TOKEN, API_KEY } from '../../auth/secret-format.js'
import type { CredentialCache } from './credential-cache.js'

interface Checks {
  authenticate(token: string): Promise<AuthContext | undefined>
}

/** Moves whenever a credential or its tenant may have changed, by this process or any other (db/sqlite-change-counter.ts). */
export interface CredentialChanges {
  /** Undefined when it cannot tell. */
  version(): number | undefined
}

/**
 * Bearer credentials of either kind (docs/decisions/0004-bearer-credentials-and-scopes.md): the prefix says
 * which, so each token is looked up in one table only. A revoked key or token fails on the very next
 * request, whichever instance serves it:
 *
 * - with a cache and `changes` (SQLite), `authenticate` answers from recent lookups only while the
 *   database says no credential has changed since, and looks up otherwise
 *   (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md);
 * - with a cache alone (PostgreSQL), `authenticate` always asks the database;
 * - with a cache, on either database, `authenticateCached` answers from recent lookups, marked
 *   `fromCache`, without asking anything: only for a route whose write checks the credential itself
 *   (docs/decisions/0091-credential-cache-checked-by-the-write.md,
 *   docs/decisions/0093-sqlite-single-punch-checks-its-credential.md).
 */
export class BearerAuthenticator {
  /** The version of `changes` the cache's entries were looked up at. */
  private cachedAt: number | undefined

  constructor(
    private readonly deps: {
      apiKeys: Checks
      tokens: Checks
      cache?: CredentialCache<AuthContext> | undefined
      changes?: CredentialChanges | undefined
    },
  ) {}

  async authenticate(token: string): Promise<AuthContext | undefined> {
    const { cache, changes } = this.deps
    if (!cache) return this.lookUp(token)
    if (!changes) {
      const auth = await this.lookUp(token)
      this.remember(cache, token, auth)
      return auth
    }
    const version = this.unchangedVersion(cache, changes)
    if (version !== undefined) {
      const hit = cache.get(token)
      if (hit) return hit
    }
    const auth = await this.lookUp(token)
    // Kept only if nothing changed while it was looked up: a revocation committed meanwhile might
    // not be in what the lookup read.
    if (version !== undefined && changes.version() === version) this.remember(cache, token, auth)
    return auth
  }

  async authenticateCached(token: string): Promise<AuthContext | undefined> {
    // No question to the database at all, not even whether anything changed: the write checks.
    const cached = this.deps.cache?.get(token)
    return cached ? { ...cached, fromCache: true } : this.authenticate(token)
  }

  /** The version of `changes` now, the cache emptied if it has moved; undefined if it cannot tell. */
  private unchangedVersion(
    cache: CredentialCache<AuthContext>,
    changes: CredentialChanges,
  ): number | undefined {
    const version = changes.version()
    if (version !== this.cachedAt) {
      cache.clear()
      this.cachedAt = version
    }
    return version
  }

  private remember(cache: CredentialCache<AuthContext>, token: string, auth: AuthContext | undefined): void {
    if (!auth) cache.delete(token)
    else cache.set(token, auth, auth.lookUpAgainAt === undefined ? undefined : auth.lookUpAgainAt / 1000)
  }

  private lookUp(token: string): Promise<AuthContext | undefined> {
    if (token.startsWith(API_KEY.prefix)) return this.deps.apiKeys.authenticate(token)
    if (token.startsWith(ACCESS_TOKEN.prefix)) return this.deps.tokens.authenticate(token)
    return Promise.resolve(undefined)
  }
}
