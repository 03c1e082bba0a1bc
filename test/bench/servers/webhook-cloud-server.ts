import pino from 'pino'
import { loadCloudConfig } from '../../../cloud/config.js'
import { startServer } from '../../../cloud/server.js'
import type { ServerMessage } from '../server-process.js'

/**
 * The Hajri cloud as `hajri-cloud serve` starts it (cloud/server.ts: migrate, the secret box, the
 * webhook dispatcher on), with its logger silenced so that log output is not what gets measured, and
 * deliveries allowed to the loopback receiver (HAJRI_WEBHOOK_ALLOWLIST=127.0.0.1, as in development).
 * argv: the database URL (seeded by the parent), HAJRI_SECRET_KEY (the throwaway key the parent sealed
 * the signing secrets with: PostgreSQL has no default), HAJRI_WEBHOOK_CONCURRENCY,
 * HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY. Speaks ServerProcess' IPC.
 */
const tell = (message: ServerMessage) => process.send?.(message)

try {
  const [url, secretKey, concurrency, endpointConcurrency] = process.argv.slice(2)
  if (!url || !secretKey || !concurrency || !endpointConcurrency)
    throw new Error(
      'usage: webhook-cloud-server.ts <database url> <secret key> <concurrency> <endpoint concurrency>',
    )
  const config = loadCloudConfig({
    HAJRI_DATABASE_URL: url,
    HAJRI_HOST: '127.0.0.1',
    HAJRI_PORT: '0',
    HAJRI_LOG_LEVEL: 'silent',
    HAJRI_SECRET_KEY: secretKey,
    HAJRI_WEBHOOK_ALLOWLIST: '127.0.0.1',
    HAJRI_WEBHOOK_CONCURRENCY: concurrency,
    HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: endpointConcurrency,
  })
  const server = await startServer(config, pino({ level: 'silent' }))
  let stopping = false
  // Once: a parent that says stop and then disconnects would otherwise close the app twice.
  const stop = () => {
    if (stopping) return
    stopping = true
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('server stop failed', err)
        process.exit(1)
      },
    )
  }
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stop()
  })
  // A parent that dies takes the server with it.
  process.once('disconnect', stop)
  tell({ type: 'listening', url: server.url })
} catch (err) {
  tell({ type: 'failed', error: err instanceof Error ? (err.stack ?? err.message) : String(err) })
  process.exit(1)
}
