import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { DatabaseHandle } from '../db/database.js'

declare module 'fastify' {
  interface FastifyInstance {
    database: DatabaseHandle
  }
}

/** Shares the database handle and closes it when the app closes, after in-flight requests finish. */
const dbPlugin: FastifyPluginAsync<{ database: DatabaseHandle; closeOnStop: boolean }> = async (
  app,
  { database, closeOnStop },
) => {
  app.decorate('database', database)
  if (closeOnStop) app.addHook('onClose', async () => database.close())
}

export default fp(dbPlugin, { name: 'hajri-db' })
