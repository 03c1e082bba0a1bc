import { loadCloudConfig } from '../../cloud/config.js'
import type { WebhookSettings } from '../../cloud/settings/webhook-settings.js'
import { MAX_BATCH_PUNCHES } from '../../shared/punch.js'
import { POSTGRES_URL } from '../support/services.js'

export type WebhookBenchDialect = 'sqlite' | 'postgres'

/**
 * Settings of the webhook benchmarks beyond the suite's own (bench-settings.ts), read from the
 * environment the same way.
 */
export interface WebhookBenchSettings {
  /**
   * HAJRI_BENCH_DATABASE: `sqlite` (default, a temporary file) or `postgres`: a throwaway schema in
   * the PostgreSQL the tests use (HAJRI_TEST_POSTGRES_URL, by default postgres://postgres@127.0.0.1:5432/test).
   */
  dialect: WebhookBenchDialect
  postgresUrl: string
  /** HAJRI_BENCH_WEBHOOK_EVENTS: the one-endpoint backlog of webhook-delivery (the 16-endpoint one is a fifth). */
  backlogEvents: number
  /**
   * The dispatcher's limits as `hajri-cloud serve` reads them (HAJRI_WEBHOOK_CONCURRENCY,
   * HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY, HAJRI_WEBHOOK_TENANT_CONCURRENCY, product defaults 16, 1 and
   * 4); the baselines keep to the first two. The benchmark's endpoints are one tenant's, so the
   * tenant's share bounds the 16-endpoint rate; raising it measures the dispatcher's own limit.
   */
  webhooks: WebhookSettings
}

function dialect(raw: string | undefined): WebhookBenchDialect {
  if (raw === undefined || raw === '' || raw === 'sqlite') return 'sqlite'
  if (raw === 'postgres') return 'postgres'
  throw new Error(`HAJRI_BENCH_DATABASE must be sqlite or postgres, got "${raw}"`)
}

function backlogEvents(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 5_000
  const n = Number(raw)
  // Whole batches: the backlog is POSTed to /punches/batch, MAX_BATCH_PUNCHES a request.
  if (!Number.isInteger(n) || n < MAX_BATCH_PUNCHES)
    throw new Error(`HAJRI_BENCH_WEBHOOK_EVENTS must be a whole number ≥ ${MAX_BATCH_PUNCHES}, got "${raw}"`)
  return n
}

export function readWebhookBenchSettings(env: NodeJS.ProcessEnv = process.env): WebhookBenchSettings {
  return {
    dialect: dialect(env.HAJRI_BENCH_DATABASE),
    postgresUrl: POSTGRES_URL,
    backlogEvents: backlogEvents(env.HAJRI_BENCH_WEBHOOK_EVENTS),
    webhooks: loadCloudConfig({
      HAJRI_WEBHOOK_CONCURRENCY: env.HAJRI_WEBHOOK_CONCURRENCY,
      HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: env.HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY,
      HAJRI_WEBHOOK_TENANT_CONCURRENCY: env.HAJRI_WEBHOOK_TENANT_CONCURRENCY,
    }).webhooks,
  }
}

/** For titles and notes. */
export function dialectName(dialect: WebhookBenchDialect): string {
  return dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'
}
