import type { AuthContext } from '../../auth/auth-context.js'
import { ACCESS_TOKEN, API_KEY } from '../../auth/secret-format.js'

interface Checks {
  authenticate(token: string): Promise<AuthContext | undefined>
}

/**
 * Bearer credentials of either kind (docs/decisions/0004-bearer-credentials-and-scopes.md): the prefix says
 * which, so each token is looked up in one table only. Nothing is cached: a revoked key or token fails on the
 * very next request, whichever instance serves it.
 */
export class BearerAuthenticator {
  constructor(private readonly deps: { apiKeys: Checks; tokens: Checks }) {}

  authenticate(token: string): Promise<AuthContext | undefined> {
    if (token.startsWith(API_KEY.prefix)) return this.deps.apiKeys.authenticate(token)
    if (token.startsWith(ACCESS_TOKEN.prefix)) return this.deps.tokens.authenticate(token)
    return Promise.resolve(undefined)
  }
}
