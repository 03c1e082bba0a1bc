import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Scope } from '../../shared/scopes.js'
import type { AuthContext } from '../auth/auth-context.js'
import { bindRequestLog } from '../http/bind-request-log.js'
import { insufficientScope } from '../http/challenge-error.js'
import { bearerToken, unknownCredential } from './bearer-token.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The scope a public API route requires (docs/decisions/0004-bearer-credentials-and-scopes.md). Every
     * such route must declare one.
     */
    scope?: Scope
    /**
     * The route's write checks, in its own statement, that a cached credential is still live, and
     * its handler calls `request.verifiedAuth()` before anything else it does: the credential may
     * come from the cache (docs/decisions/0091-credential-cache-checked-by-the-write.md).
     */
    liveCredentialCheckedByWrite?: true
    /**
     * The route's read checks, in its own statement, that a cached credential is still live, and
     * when it finds nothing its handler calls `request.verifiedAuth()` before it reads again
     * (http/read-for-cached-caller.ts, docs/decisions/0094-reads-check-a-cached-credential.md).
     */
    liveCredentialCheckedByRead?: true
  }
  interface FastifyRequest {
    /** The authenticated caller. Set on every public API route before its handler runs. */
    auth: AuthContext
    /**
     * `auth` as the database has it now: looked up again (and a 401 if it is no longer live) when it
     * came from the cache, `auth` itself otherwise.
     */
    verifiedAuth(): Promise<AuthContext>
  }
}

export interface Authenticator {
  authenticate(token: string): Promise<AuthContext | undefined>
  /** May answer from recent lookups, marked `fromCache`; without it, every request is looked up. */
  authenticateCached?(token: string): Promise<AuthContext | undefined>
}

/**
 * Authenticates every route of the scope it is registered in, then checks the route's scope. It
 * runs onRequest, before the body is read, so an anonymous caller cannot make us parse a large body.
 * A route without a scope fails at startup: no public route can be left open by mistake.
 */
const authPlugin: FastifyPluginAsync<{ authenticator: Authenticator }> = async (app, { authenticator }) => {
  app.decorateRequest('auth', null as unknown as AuthContext)

  app.addHook('onRoute', (route) => {
    if (route.config?.scope === undefined) {
      throw new Error(`route ${route.method} ${route.url} declares no scope (config.scope)`)
    }
  })

  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request, 'API key or access token')
    const { config } = request.routeOptions
    const cached =
      (config.liveCredentialCheckedByWrite || config.liveCredentialCheckedByRead) &&
      authenticator.authenticateCached
    const auth = await (cached ? cached.call(authenticator, token) : authenticator.authenticate(token))
    if (auth) {
      request.log = bindRequestLog(request.log, {
        tenantId: auth.tenant.id,
        credentialId: auth.credential.id,
      })
    }
    accept(request, auth)
  })

  app.decorateRequest('verifiedAuth', async function verifiedAuth(this: FastifyRequest) {
    if (!this.auth.fromCache) return this.auth
    // The same secret, so the same credential and tenant the request's log is already bound to.
    accept(this, await authenticator.authenticate(bearerToken(this, 'API key or access token')))
    return this.auth
  })
}

/** Sets the request's caller, or refuses it: unknown, or without the route's scope. */
function accept(request: FastifyRequest, auth: AuthContext | undefined): void {
  if (!auth) throw unknownCredential()
  const scope = request.routeOptions.config.scope
  request.auth = auth
  if (scope === undefined || !auth.credential.scopes.includes(scope)) {
    throw insufficientScope(String(scope))
  }
}

export default fp(authPlugin, { name: 'hajri-auth' })
