/**
 * How the dispatcher behaves; each from an environment variable (config.ts), with its default
 * (docs/decisions/0021-webhook-retries.md).
 */
export interface WebhookSettings {
  /** Seconds before each attempt: the first is immediate (HAJRI_WEBHOOK_RETRY_SCHEDULE). */
  retrySchedule: readonly number[]
  /** Hosts and CIDRs deliveries may reach although private (HAJRI_WEBHOOK_ALLOWLIST); for development and tests. */
  allowlist: readonly string[]
  /** An endpoint failing without a success for this long is disabled (HAJRI_WEBHOOK_DISABLE_AFTER). */
  disableAfterSeconds: number
  /** Per attempt, the whole of it (HAJRI_WEBHOOK_TIMEOUT_SECONDS). */
  timeoutSeconds: number
  /**
   * To look a receiver up and connect to it, within the attempt's timeout
   * (HAJRI_WEBHOOK_CONNECT_TIMEOUT_SECONDS): an address that drops the connection attempt holds a
   * slot this long, not the whole timeout.
   */
  connectTimeoutSeconds: number
  /** Attempts in flight at once, over all endpoints, per instance (HAJRI_WEBHOOK_CONCURRENCY). */
  concurrency: number
  /** Attempts in flight at once to one endpoint, per instance (HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY). */
  endpointConcurrency: number
  /**
   * Attempts in flight at once for one tenant's endpoints, per instance: its share of the slots
   * (HAJRI_WEBHOOK_TENANT_CONCURRENCY). One tenant whose receivers hang holds at most this many,
   * and the others' deliveries go on in the rest.
   */
  tenantConcurrency: number
  /** Endpoints one tenant may have (HAJRI_WEBHOOK_MAX_ENDPOINTS); deleted ones do not count. */
  maxEndpointsPerTenant: number
}

/** Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (docs/decisions/0021-webhook-retries.md). */
export const DEFAULT_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  allowlist: [],
  disableAfterSeconds: 5 * 86_400,
  timeoutSeconds: 15,
  connectTimeoutSeconds: 5,
  concurrency: 16,
  endpointConcurrency: 1,
  tenantConcurrency: 4,
  maxEndpointsPerTenant: 100,
}

/** `0,5,300`: whole seconds, the first attempt first. Undefined when it is not that. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const parts = text.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.length > 50 || !parts.every((p) => /^\d{1,7}$/.test(p))) return undefined
  return parts.map(Number)
}
