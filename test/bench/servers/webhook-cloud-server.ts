import pino from 'pino'
import { loadCloudConfig } from '../../../cloud/config.js'
import { startServer } from '../../../cloud/server.js'
import { runInChild } from './serve-in-child.js'

/**
 * The Hajri cloud as `hajri-cloud serve` starts it (cloud/server.ts: migrate, the secret box, the
 * webhook dispatcher on), with its logger silenced so that log output is not what gets measured, and
 * deliveries allowed to the loopback receiver (HAJRI_WEBHOOK_ALLOWLIST=127.0.0.1, as in development).
 * argv: the database URL (seeded by the parent), HAJRI_SECRET_KEY (the throwaway key the parent sealed
 * the signing secrets with: PostgreSQL has no default), HAJRI_WEBHOOK_CONCURRENCY,
 * HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY, HAJRI_WEBHOOK_TENANT_CONCURRENCY. Speaks ServerProcess' IPC
 * (runInChild).
 */
await runInChild(async () => {
  const [url, secretKey, concurrency, endpointConcurrency, tenantConcurrency] = process.argv.slice(2)
  if (!url || !secretKey || !concurrency || !endpointConcurrency || !tenantConcurrency)
    throw new Error(
      'usage: webhook-cloud-server.ts <database url> <secret key> <concurrency> <endpoint concurrency> <tenant concurrency>',
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
    HAJRI_WEBHOOK_TENANT_CONCURRENCY: tenantConcurrency,
  })
  return startServer(config, pino({ level: 'silent' }))
})
