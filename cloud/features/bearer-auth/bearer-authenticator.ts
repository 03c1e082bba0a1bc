import type { AuthContext } from '../../auth/auth-context.js'
import { ACCESS_TOKEN, API_KEY } from '../../auth/secret-format.js'
import type { CredentialCache } from './credential-cache.js'

interface Checks {
  authenticate(token: string): Promise<AuthContext | undefined>
}

/**
 * Bearer credentials of either kind (docs/decisions/0004-bearer-credentials-and-scopes.md): the prefix says
 * which, so each token is looked up in one table only. `authenticate` always asks the database, so a
 * revoked key or token fails on the very next request, whichever instance serves it. With a cache,
 * `authenticateCached` may answer from recent lookups instead, marked `fromCache`: only for a route
 * whose write checks the credential in its own statement
 * (docs/decisions/0091-credential-cache-checked-by-the-write.md).
 */
export class BearerAuthenticator {
  constructor(
    private readonly deps: {
      apiKeys: Checks
      tokens: Checks
      cache?: CredentialCache<AuthContext> | undefined
    },
  ) {}

  async authenticate(token: string): Promise<AuthContext | undefined> {
    const auth = await this.lookUp(token)
    const { cache } = this.deps
    if (cache) {
      if (auth) cache.set(token, auth)
      else cache.delete(token)
    }
    return auth
  }

  async authenticateCached(token: string): Promise<AuthContext | undefined> {
    const cached = this.deps.cache?.get(token)
    return cached ? { ...cached, fromCache: true } : this.authenticate(token)
  }

  private lookUp(token: string): Promise<AuthContext | undefined> {
    if (token.startsWith(API_KEY.prefix)) return this.deps.apiKeys.authenticate(token)
    if (token.startsWith(ACCESS_TOKEN.prefix)) return this.deps.tokens.authenticate(token)
    return Promise.resolve(undefined)
  }
}
