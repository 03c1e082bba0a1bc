import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsync } from 'fastify'
import { AppError } from '../../app-error.js'

const HealthSchema = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false })

/** /healthz: the process answers. /readyz: it can also reach its database, so a balancer may send traffic. */
export const healthRoutes: FastifyPluginAsync<{
  /** Resolves when the database answers a query. */
  pingDatabase: () => Promise<void>
}> = async (app, { pingDatabase }) => {
  app.get(
    '/healthz',
    {
      schema: { tags: ['Operations'], summary: 'Liveness', response: { 200: HealthSchema } },
      logLevel: 'warn',
    },
    async () => ({ status: 'ok' as const }),
  )
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: the database answers',
        response: { 200: HealthSchema },
      },
      logLevel: 'warn',
    },
    async (request) => {
      try {
        await pingDatabase()
      } catch (err) {
        request.log.warn({ err }, 'database not reachable')
        throw new AppError('service_unavailable', 'The database is not reachable.')
      }
      return { status: 'ok' as const }
    },
  )
}
