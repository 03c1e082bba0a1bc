import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { PROBLEM_CONTENT_TYPE } from '../../shared/problem.js'
import { AppError, toProblem } from '../app-error.js'
import type { DatabaseHandle } from '../db/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: DatabaseHandle
  }
}

/**
 * Shares the database handle, closes it when the app closes (after in-flight requests finish), and
 * holds every answer until the commits it may report are on disk (DatabaseHandle.durable): a 201
 * means stored, even across a power cut.
 */
const dbPlugin: FastifyPluginAsync<{ database: DatabaseHandle; closeOnStop: boolean }> = async (
  app,
  { database, closeOnStop },
) => {
  app.decorate('database', database)
  app.addHook('onSend', async (request, reply, payload) => {
    try {
      await database.durable()
      return payload
    } catch (err) {
      // The disk refused: what this answer reports may not be stored, so it must not be sent.
      request.log.fatal({ err }, 'database not durable; restart the service')
      reply.code(500).type(PROBLEM_CONTENT_TYPE).removeHeader('location').removeHeader('idempotent-replayed')
      return JSON.stringify(
        toProblem(new AppError('internal_error', 'The data could not be stored safely.'), request.id),
      )
    }
  })
  if (closeOnStop) app.addHook('onClose', async () => database.close())
}

export default fp(dbPlugin, { name: 'hajri-db' })
