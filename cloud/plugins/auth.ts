import type { FastifyPluginAsync } from 'fastify'
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
  }
  interface FastifyRequest {
    /** The authenticated caller. Set on every public API route before its handler runs. */
    auth: AuthContext
  }
}

export interface Authenticator {
  authenticate(token: string): Promise<AuthContext | undefined>
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
    const scope = request.routeOptions.config.scope
    const token = bearerToken(request, 'API key or access token')
    const auth = await authenticator.authenticate(token)
    if (!auth) throw unknownCredential()
    request.auth = auth
    request.log = bindRequestLog(request.log, { tenantId: auth.tenant.id, credentialId: auth.credential.id })
    if (scope === undefined || !auth.credential.scopes.includes(scope)) {
      throw insufficientScope(String(scope))
    }
  })
}

export default fp(authPlugin, { name: 'hajri-auth' })
