import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { CloudConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'

export interface RunningServer {
  app: FastifyInstance
  url: string
  stop(): Promise<void>
}

/**
 * `hajri-cloud serve`: migrate, then listen. Migrating at start keeps a one-machine install to a
 * single command; on PostgreSQL, several instances starting together wait on the migration lock.
 */
export async function startServer(config: CloudConfig, log: FastifyBaseLogger): Promise<RunningServer> {
  const database = openDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    onPoolError: (err) => log.warn({ err }, 'idle database connection failed'),
  })
  try {
    const applied = await migrateToLatest(database.db)
    log.info(
      { database: database.describe, applied },
      applied.length > 0 ? 'migrations applied' : 'schema up to date',
    )
  } catch (err) {
    await database.close()
    throw err
  }
  let app: FastifyInstance
  try {
    app = await buildApp({ config, database, logger: log })
  } catch (err) {
    await database.close()
    throw err
  }
  try {
    const url = await app.listen({ host: config.host, port: config.port })
    return { app, url, stop: () => app.close() }
  } catch (err) {
    // The app owns the database now: closing it closes both.
    await app.close()
    throw err
  }
}
