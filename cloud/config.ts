import { parseDuration } from '../shared/duration.js'
import { isLoopbackHost } from '../shared/loopback-host.js'
import { ConfigError } from './settings/config-error.js'
import {
  DEFAULT_DATABASE_POOL_SIZE,
  DEFAULT_DATABASE_URL,
  parseDatabaseUrl,
} from './settings/database-url.js'
import { DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL } from './settings/idempotency-limits.js'
import {
  DEFAULT_CONSOLE_RATE_LIMIT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
} from './settings/rate-limits.js'
import { DEFAULT_SERVER_TIMEOUTS } from './settings/server-timeouts.js'
import {
  DEFAULT_WEBHOOK_SETTINGS,
  parseRetrySchedule,
  type WebhookSettings,
} from './settings/webhook-settings.js'

/**
 * hajri-cloud is configured by environment variables only (twelve-factor), so the same image runs
 * on a laptop, under systemd and in a container. Every wrong variable is reported, not just the first.
 */

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export interface CloudConfig {
  /** `sqlite:./data/hajri.db` (default) or `postgres://...`. */
  databaseUrl: string
  host: string
  port: number
  logLevel: LogLevel
  /** Trust `X-Forwarded-*` from a reverse proxy: `true`, a hop count, or a comma-separated list of addresses. */
  trustProxy: boolean | number | string
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number
  /** Connections in the PostgreSQL pool (ignored for SQLite). */
  databasePoolSize: number
  /** Redis for rate-limit counters shared by every instance; unset, each instance counts alone. */
  redisUrl: string | undefined
  /**
   * The URL clients use to reach this service (behind a proxy, the proxy's): the OAuth issuer
   * (RFC 8414). Unset, it is taken from each request's Host.
   */
  publicUrl: string | undefined
  /** Requests a minute to the OAuth endpoints from one address, and for one client id (against guessing). */
  oauthRateLimitPerIp: number
  oauthRateLimitPerClient: number
  /** Requests a minute one admin token may make to the console API. */
  consoleRateLimit: number
  /** Bytes of stored Idempotency-Key responses one credential may keep within their 24 hours. */
  idempotencyMaxBytesPerCredential: number
  /** Encrypts webhook signing secrets at rest (32 bytes, base64); see db/secret-key.ts. */
  secretKey: string | undefined
  secretKeyFile: string | undefined
  webhooks: WebhookSettings
  /**
   * Slow clients (OWASP API4:2023), in seconds: the request line and headers, the whole request,
   * a connection with no traffic, an idle keep-alive connection. Unset: the defaults of
   * cloud/settings/server-timeouts.ts.
   */
  headersTimeoutSeconds?: number | undefined
  requestTimeoutSeconds?: number | undefined
  idleTimeoutSeconds?: number | undefined
  keepAliveTimeoutSeconds?: number | undefined
  /**
   * Prometheus metrics (GET /metrics) on a listener of their own, never the API's: the port, unset
   * for none (the default), and the address, loopback unless set.
   */
  metricsPort?: number | undefined
  metricsHost?: string | undefined
}

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    problems.push(`${name}: must be a whole number from ${min} to ${max}, got "${raw}"`)
    return fallback
  }
  return value
}

/** A whole number of seconds, or undefined when unset (the caller's default then applies). */
function optionalSeconds(env: NodeJS.ProcessEnv, name: string, problems: string[]): number | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < 1 || value > 3600) {
    problems.push(`${name}: must be a whole number of seconds from 1 to 3600, got "${raw}"`)
    return undefined
  }
  return value
}

function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false
  if (raw === 'true') return true
  if (/^\d+$/.test(raw)) return Number(raw)
  return raw
}

export function loadCloudConfig(env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const problems: string[] = []
  const databaseUrl = env.HAJRI_DATABASE_URL || DEFAULT_DATABASE_URL
  try {
    parseDatabaseUrl(databaseUrl)
  } catch (err) {
    problems.push((err as Error).message)
  }
  const logLevel = (env.HAJRI_LOG_LEVEL || 'info') as LogLevel
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`HAJRI_LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`)
  }
  const redisUrl = env.HAJRI_REDIS_URL || undefined
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push(`HAJRI_REDIS_URL: must start with redis:// or rediss://, got "${redisUrl}"`)
  }
  const publicUrl = env.HAJRI_PUBLIC_URL?.replace(/\/+$/, '') || undefined
  if (publicUrl !== undefined && (!URL.canParse(publicUrl) || !/^https?:\/\//.test(publicUrl))) {
    problems.push(`HAJRI_PUBLIC_URL: must be an http(s) URL, got "${env.HAJRI_PUBLIC_URL}"`)
  }
  const host = env.HAJRI_HOST || '127.0.0.1'
  // Listening beyond loopback means others reach the cloud by some name: the issuer in the OAuth
  // metadata, the console's origin and webhook links must be that name, never one taken from a
  // request's Host header (which any client chooses).
  if (publicUrl === undefined && !isLoopbackHost(host)) {
    problems.push(
      `HAJRI_PUBLIC_URL: required when HAJRI_HOST (${host}) is not a loopback address; set it to the address people and agents use, e.g. https://hajri.example.com`,
    )
  }
  const scheduleText = env.HAJRI_WEBHOOK_RETRY_SCHEDULE
  const retrySchedule = scheduleText
    ? parseRetrySchedule(scheduleText)
    : DEFAULT_WEBHOOK_SETTINGS.retrySchedule
  if (!retrySchedule) {
    problems.push(
      `HAJRI_WEBHOOK_RETRY_SCHEDULE: must be comma-separated whole seconds, e.g. 0,5,300, got "${scheduleText}"`,
    )
  }
  const disableAfterText = env.HAJRI_WEBHOOK_DISABLE_AFTER
  const disableAfterSeconds = disableAfterText
    ? parseDuration(disableAfterText)
    : DEFAULT_WEBHOOK_SETTINGS.disableAfterSeconds
  if (disableAfterSeconds === undefined) {
    problems.push(
      `HAJRI_WEBHOOK_DISABLE_AFTER: must be a duration such as 5d or 12h, got "${disableAfterText}"`,
    )
  }
  const allowlist = (env.HAJRI_WEBHOOK_ALLOWLIST ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '')
  const whole = (name: string, fallback: number, min: number, max: number) =>
    integer(env, name, fallback, min, max, problems)
  const hooks = DEFAULT_WEBHOOK_SETTINGS
  const config: CloudConfig = {
    databaseUrl,
    host,
    port: whole('HAJRI_PORT', 8080, 0, 65535),
    logLevel,
    trustProxy: trustProxy(env.HAJRI_TRUST_PROXY),
    bodyLimitBytes: whole('HAJRI_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    databasePoolSize: whole('HAJRI_DATABASE_POOL_SIZE', DEFAULT_DATABASE_POOL_SIZE, 1, 1000),
    redisUrl,
    publicUrl,
    oauthRateLimitPerIp: whole(
      'HAJRI_OAUTH_RATE_LIMIT_PER_IP',
      DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
      1,
      1_000_000,
    ),
    oauthRateLimitPerClient: whole(
      'HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT',
      DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
      1,
      1_000_000,
    ),
    consoleRateLimit: whole('HAJRI_CONSOLE_RATE_LIMIT', DEFAULT_CONSOLE_RATE_LIMIT, 1, 1_000_000),
    idempotencyMaxBytesPerCredential: whole(
      'HAJRI_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL',
      DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL,
      64 * 1024,
      64 * 1024 * 1024 * 1024,
    ),
    secretKey: env.HAJRI_SECRET_KEY || undefined,
    secretKeyFile: env.HAJRI_SECRET_KEY_FILE || undefined,
    webhooks: {
      retrySchedule: retrySchedule ?? DEFAULT_WEBHOOK_SETTINGS.retrySchedule,
      allowlist,
      disableAfterSeconds: disableAfterSeconds ?? DEFAULT_WEBHOOK_SETTINGS.disableAfterSeconds,
      timeoutSeconds: whole('HAJRI_WEBHOOK_TIMEOUT_SECONDS', hooks.timeoutSeconds, 1, 120),
      concurrency: whole('HAJRI_WEBHOOK_CONCURRENCY', hooks.concurrency, 1, 1000),
      endpointConcurrency: whole('HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY', hooks.endpointConcurrency, 1, 100),
      connectTimeoutSeconds: whole(
        'HAJRI_WEBHOOK_CONNECT_TIMEOUT_SECONDS',
        hooks.connectTimeoutSeconds,
        1,
        120,
      ),
      tenantConcurrency: whole('HAJRI_WEBHOOK_TENANT_CONCURRENCY', hooks.tenantConcurrency, 1, 1000),
      maxEndpointsPerTenant: whole('HAJRI_WEBHOOK_MAX_ENDPOINTS', hooks.maxEndpointsPerTenant, 1, 10_000),
    },
    headersTimeoutSeconds: optionalSeconds(env, 'HAJRI_HEADERS_TIMEOUT_SECONDS', problems),
    requestTimeoutSeconds: optionalSeconds(env, 'HAJRI_REQUEST_TIMEOUT_SECONDS', problems),
    idleTimeoutSeconds: optionalSeconds(env, 'HAJRI_IDLE_TIMEOUT_SECONDS', problems),
    keepAliveTimeoutSeconds: optionalSeconds(env, 'HAJRI_KEEP_ALIVE_TIMEOUT_SECONDS', problems),
  }
  const headers = config.headersTimeoutSeconds ?? DEFAULT_SERVER_TIMEOUTS.headersMs / 1000
  const request = config.requestTimeoutSeconds ?? DEFAULT_SERVER_TIMEOUTS.requestMs / 1000
  if (headers > request) {
    problems.push(
      `HAJRI_HEADERS_TIMEOUT_SECONDS (${headers}) must not be longer than HAJRI_REQUEST_TIMEOUT_SECONDS (${request}): the headers are part of the request`,
    )
  }
  if (env.HAJRI_METRICS_PORT) {
    config.metricsPort = whole('HAJRI_METRICS_PORT', 0, 1, 65535)
    config.metricsHost = env.HAJRI_METRICS_HOST || '127.0.0.1'
    if (config.metricsPort === config.port) {
      problems.push(
        `HAJRI_METRICS_PORT (${config.metricsPort}) must differ from HAJRI_PORT: the metrics have a listener of their own`,
      )
    }
  } else if (env.HAJRI_METRICS_HOST) {
    problems.push('HAJRI_METRICS_HOST: set HAJRI_METRICS_PORT too, or nothing listens for metrics')
  }
  if (config.secretKey !== undefined && Buffer.from(config.secretKey, 'base64').length !== 32) {
    problems.push('HAJRI_SECRET_KEY: must be 32 bytes in base64 (openssl rand -base64 32)')
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}
