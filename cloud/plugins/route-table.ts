import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

export interface RouteRecord {
  method: string
  url: string
  /** A public API route's scope. */
  scope: string | undefined
  /** A console API route's access. */
  access: string | undefined
  /** A route under /api/public/v1 that needs no credential (the webhook event catalog). */
  anonymous: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Declares a route under /api/public/v1 open without a credential: a deliberate, tested exception. */
    anonymous?: true
  }
  interface FastifyInstance {
    /** Every route the app serves, for tests that must cover them all (tenant isolation, fuzzing). */
    routeTable: RouteRecord[]
  }
}

/** Records every route as it is added, with what guards it; registered before any route. */
const routeTablePlugin: FastifyPluginAsync = async (app) => {
  const routeTable: RouteRecord[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      routeTable.push({
        method,
        url: route.url,
        scope: route.config?.scope,
        access: route.config?.access,
        anonymous: route.config?.anonymous === true,
      })
    }
  })
}

export default fp(routeTablePlugin, { name: 'hajri-route-table' })
