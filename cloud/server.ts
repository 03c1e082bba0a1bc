import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import type { CloudConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'
import { openRedis } from './db/redis.js'
import { CloudMetrics } from './metrics/cloud-metrics.js'
import { type MetricsListener, startMetricsListener } from './metrics/metrics-listener.js'
import { ConfigError } from './settings/config-error.js'
import { parseDatabaseUrl } from './settings/database-url.js'

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
  const metrics = new CloudMetrics(parseDatabaseUrl(config.databaseUrl).dialect, { processMetrics: true })
  const database = openDatabase(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    secretKey: config.secretKey,
    secretKeyFile: config.secretKeyFile,
    onPoolError: (err) => log.warn({ err }, 'database connection failed'),
    // Timed only where someone reads them.
    ...(config.metricsPort ? { onQuery: (seconds: number) => metrics.query(seconds) } : {}),
  })
  try {
    // The key that seals webhook secrets, loaded now: a missing or bad one stops the start, not a request.
    database.secretBox()
    const applied = await migrateToLatest(database.db)
    log.info(
      { database: database.describe, applied },
      applied.length > 0 ? 'migrations applied' : 'schema up to date',
    )
  } catch (err) {
    await database.close()
    throw err
  }
  let lastRedisError = 0
  const redis = config.redisUrl
    ? openRedis(config.redisUrl, (err) => {
        // Say it once a minute while it lasts, not once per request.
        if (Date.now() - lastRedisError < 60_000) return
        lastRedisError = Date.now()
        log.warn({ err }, 'Redis unreachable: rate limits are not enforced until it is back')
      })
    : undefined
  const closeRedis = async () => {
    await redis?.quit().catch(() => redis.disconnect())
  }
  let app: FastifyInstance
  let metricsListener: MetricsListener | undefined
  try {
    app = await buildApp({
      config,
      database,
      logger: log,
      dispatchWebhooks: true,
      computeAttendance: true,
      metrics,
      ...(redis ? { redis } : {}),
    })
    app.addHook('onClose', closeRedis)
    app.addHook('onClose', async () => metricsListener?.close())
  } catch (err) {
    await database.close()
    await closeRedis()
    throw err
  }
  let url: string
  try {
    url = await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    // The app owns the database now: closing it closes both.
    await app.close()
    throw listenError(err, 'HAJRI_PORT', config.host, config.port)
  }
  if (config.metricsPort) {
    const host = config.metricsHost ?? '127.0.0.1'
    try {
      metricsListener = await startMetricsListener(metrics.registry, host, config.metricsPort)
      log.info({ url: metricsListener.url }, 'metrics listening')
    } catch (err) {
      await app.close()
      throw listenError(err, 'HAJRI_METRICS_PORT', host, config.metricsPort)
    }
  }
  return { app, url, stop: () => app.close() }
}

/**
 * The usual reasons a listen fails, said in terms of the setting to change (`npm start` on a
 * machine where something already has port 8080); anything else as it came.
 */
function listenError(
  err: unknown,
  portVariable: 'HAJRI_PORT' | 'HAJRI_METRICS_PORT',
  host: string,
  port: number,
): unknown {
  const address = `${host}:${port}`
  const hostVariable = portVariable === 'HAJRI_PORT' ? 'HAJRI_HOST' : 'HAJRI_METRICS_HOST'
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return new ConfigError([
        `${portVariable}: ${address} is already in use by another program; stop it, or set ${portVariable} to a free port`,
      ])
    case 'EACCES':
      return new ConfigError([
        `${portVariable}: this user may not listen on ${address} (ports below 1024 need privileges); set ${portVariable} to 1024 or above`,
      ])
    case 'EADDRNOTAVAIL':
      return new ConfigError([`${hostVariable}: ${host} is not an address of this machine`])
    default:
      return err
  }
}
