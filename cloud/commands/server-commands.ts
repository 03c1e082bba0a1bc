import pino from 'pino'
import { loadCloudConfig } from '../config.js'
import { openDatabase } from '../db/database.js'
import { migrateToLatest } from '../db/migrate.js'
import { loggerOptions } from '../logger-options.js'
import { startServer } from '../server.js'
import { command } from './command-context.js'

/** `serve`: runs until SIGINT or SIGTERM, then lets in-flight requests finish. */
const serve = command({
  name: 'serve',
  summary: 'start the API (migrates the database first)',
  options: [],
  run: async ({ io }) => {
    const config = loadCloudConfig(io.env)
    const log = pino(loggerOptions(config.logLevel))
    const server = await startServer(config, log)
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping')
      server.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'stop failed')
          process.exit(1)
        },
      )
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  },
})

const migrate = command({
  name: 'migrate',
  summary: 'bring the database schema up to date',
  options: [],
  run: async (context) => {
    const config = loadCloudConfig(context.io.env)
    const database = openDatabase(config.databaseUrl, { poolSize: 1, cwd: context.io.cwd })
    try {
      const applied = await migrateToLatest(database.db)
      context.print(
        { applied, database: database.describe },
        applied.length > 0 ? `applied: ${applied.join(', ')}` : `${database.describe}: schema up to date`,
      )
    } finally {
      await database.close()
    }
  },
})

export const serverCommands = [serve, migrate]
