import { describe, expect, it } from 'vitest'
import { loadCloudConfig } from '../../cloud/config.js'
import { ConfigError } from '../../cloud/settings/config-error.js'
import { DEFAULT_DATABASE_POOL_SIZE, DEFAULT_DATABASE_URL } from '../../cloud/settings/database-url.js'
import { DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL } from '../../cloud/settings/idempotency-limits.js'
import {
  DEFAULT_CONSOLE_RATE_LIMIT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
  DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
} from '../../cloud/settings/rate-limits.js'
import { DEFAULT_WEBHOOK_SETTINGS } from '../../cloud/settings/webhook-settings.js'

/** The problems loadCloudConfig reports for `env`, or [] when it accepts it. */
function problemsFor(env: NodeJS.ProcessEnv): string[] {
  try {
    loadCloudConfig(env)
    return []
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems
  }
}

describe('loadCloudConfig', () => {
  it('has a default for everything', () => {
    expect(loadCloudConfig({})).toEqual({
      databaseUrl: 'sqlite:./data/hajri.db',
      host: '127.0.0.1',
      port: 8080,
      logLevel: 'info',
      trustProxy: false,
      bodyLimitBytes: 1024 * 1024,
      databasePoolSize: 10,
      redisUrl: undefined,
      publicUrl: undefined,
      oauthRateLimitPerIp: 300,
      oauthRateLimitPerClient: 60,
      consoleRateLimit: 600,
      idempotencyMaxBytesPerCredential: 32 * 1024 * 1024,
      secretKey: undefined,
      secretKeyFile: undefined,
      webhooks: {
        retrySchedule: [0, 5, 300, 1800, 7200, 18_000, 36_000, 36_000],
        allowlist: [],
        disableAfterSeconds: 5 * 86_400,
        timeoutSeconds: 15,
        concurrency: 16,
        endpointConcurrency: 1,
        connectTimeoutSeconds: 5,
        tenantConcurrency: 4,
        maxEndpointsPerTenant: 100,
      },
    })
    expect(DEFAULT_DATABASE_URL).toBe('sqlite:./data/hajri.db')
  })

  it('takes each default from the settings module that declares it, which lower layers read too', () => {
    expect(loadCloudConfig({})).toMatchObject({
      databaseUrl: DEFAULT_DATABASE_URL,
      databasePoolSize: DEFAULT_DATABASE_POOL_SIZE,
      oauthRateLimitPerIp: DEFAULT_OAUTH_RATE_LIMIT_PER_IP,
      oauthRateLimitPerClient: DEFAULT_OAUTH_RATE_LIMIT_PER_CLIENT,
      consoleRateLimit: DEFAULT_CONSOLE_RATE_LIMIT,
      idempotencyMaxBytesPerCredential: DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL,
      webhooks: DEFAULT_WEBHOOK_SETTINGS,
    })
  })

  it('treats an empty variable as unset', () => {
    expect(
      loadCloudConfig({
        HAJRI_DATABASE_URL: '',
        HAJRI_HOST: '',
        HAJRI_PORT: '',
        HAJRI_LOG_LEVEL: '',
        HAJRI_TRUST_PROXY: '',
        HAJRI_BODY_LIMIT_BYTES: '',
        HAJRI_DATABASE_POOL_SIZE: '',
        HAJRI_REDIS_URL: '',
        HAJRI_PUBLIC_URL: '',
        HAJRI_OAUTH_RATE_LIMIT_PER_IP: '',
        HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT: '',
        HAJRI_CONSOLE_RATE_LIMIT: '',
        HAJRI_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL: '',
        HAJRI_SECRET_KEY: '',
        HAJRI_SECRET_KEY_FILE: '',
        HAJRI_WEBHOOK_RETRY_SCHEDULE: '',
        HAJRI_WEBHOOK_ALLOWLIST: '',
        HAJRI_WEBHOOK_DISABLE_AFTER: '',
        HAJRI_WEBHOOK_TIMEOUT_SECONDS: '',
        HAJRI_WEBHOOK_CONCURRENCY: '',
        HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: '',
      }),
    ).toEqual(loadCloudConfig({}))
  })

  it('reads every variable', () => {
    expect(
      loadCloudConfig({
        HAJRI_DATABASE_URL: 'postgres://hajri@db:5432/hajri',
        HAJRI_HOST: '0.0.0.0',
        HAJRI_PORT: '9000',
        HAJRI_LOG_LEVEL: 'debug',
        HAJRI_TRUST_PROXY: 'true',
        HAJRI_BODY_LIMIT_BYTES: '2048',
        HAJRI_DATABASE_POOL_SIZE: '25',
        HAJRI_REDIS_URL: 'redis://cache:6379',
        HAJRI_PUBLIC_URL: 'https://hajri.example.com/',
        HAJRI_OAUTH_RATE_LIMIT_PER_IP: '120',
        HAJRI_OAUTH_RATE_LIMIT_PER_CLIENT: '10',
        HAJRI_CONSOLE_RATE_LIMIT: '100',
        HAJRI_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL: '1048576',
        HAJRI_SECRET_KEY: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
        HAJRI_SECRET_KEY_FILE: '/run/secrets/hajri-key',
        HAJRI_WEBHOOK_RETRY_SCHEDULE: '0, 1,2',
        HAJRI_WEBHOOK_ALLOWLIST: 'receiver.test, 10.1.0.0/16',
        HAJRI_WEBHOOK_DISABLE_AFTER: '12h',
        HAJRI_WEBHOOK_TIMEOUT_SECONDS: '5',
        HAJRI_WEBHOOK_CONCURRENCY: '4',
        HAJRI_WEBHOOK_ENDPOINT_CONCURRENCY: '2',
      }),
    ).toEqual({
      databaseUrl: 'postgres://hajri@db:5432/hajri',
      host: '0.0.0.0',
      port: 9000,
      logLevel: 'debug',
      trustProxy: true,
      bodyLimitBytes: 2048,
      databasePoolSize: 25,
      redisUrl: 'redis://cache:6379',
      // The trailing slash goes: the issuer and the endpoints are built from it.
      publicUrl: 'https://hajri.example.com',
      oauthRateLimitPerIp: 120,
      oauthRateLimitPerClient: 10,
      consoleRateLimit: 100,
      idempotencyMaxBytesPerCredential: 1048576,
      secretKey: 'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
      secretKeyFile: '/run/secrets/hajri-key',
      webhooks: {
        retrySchedule: [0, 1, 2],
        allowlist: ['receiver.test', '10.1.0.0/16'],
        disableAfterSeconds: 12 * 3600,
        timeoutSeconds: 5,
        concurrency: 4,
        endpointConcurrency: 2,
        connectTimeoutSeconds: 5,
        tenantConcurrency: 4,
        maxEndpointsPerTenant: 100,
      },
    })
  })

  it('refuses webhook settings that are not what they must be, one message each', () => {
    expect(
      problemsFor({
        HAJRI_WEBHOOK_RETRY_SCHEDULE: '0,5m',
        HAJRI_WEBHOOK_DISABLE_AFTER: 'soon',
        HAJRI_WEBHOOK_TIMEOUT_SECONDS: '0',
        HAJRI_SECRET_KEY: 'c2hvcnQ=',
      }),
    ).toEqual([
      'HAJRI_WEBHOOK_RETRY_SCHEDULE: must be comma-separated whole seconds, e.g. 0,5,300, got "0,5m"',
      'HAJRI_WEBHOOK_DISABLE_AFTER: must be a duration such as 5d or 12h, got "soon"',
      'HAJRI_WEBHOOK_TIMEOUT_SECONDS: must be a whole number from 1 to 120, got "0"',
      'HAJRI_SECRET_KEY: must be 32 bytes in base64 (openssl rand -base64 32)',
    ])
  })

  it('serves metrics only when HAJRI_METRICS_PORT is set, on loopback unless HAJRI_METRICS_HOST says', () => {
    expect(loadCloudConfig({}).metricsPort).toBeUndefined()
    expect(loadCloudConfig({ HAJRI_METRICS_PORT: '9464' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
    })
    expect(loadCloudConfig({ HAJRI_METRICS_PORT: '9464', HAJRI_METRICS_HOST: '10.0.0.5' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '10.0.0.5',
    })
    expect(problemsFor({ HAJRI_METRICS_PORT: 'prometheus' })).toEqual([
      'HAJRI_METRICS_PORT: must be a whole number from 1 to 65535, got "prometheus"',
    ])
    expect(problemsFor({ HAJRI_METRICS_PORT: '8080' })).toEqual([
      'HAJRI_METRICS_PORT (8080) must differ from HAJRI_PORT: the metrics have a listener of their own',
    ])
    expect(problemsFor({ HAJRI_METRICS_HOST: '0.0.0.0' })).toEqual([
      'HAJRI_METRICS_HOST: set HAJRI_METRICS_PORT too, or nothing listens for metrics',
    ])
  })

  it('refuses a Redis URL or public URL that is not one', () => {
    const problems = problemsFor({ HAJRI_REDIS_URL: 'cache:6379', HAJRI_PUBLIC_URL: 'hajri.example.com' })
    expect(problems).toHaveLength(2)
    expect(problems[0]).toMatch(/^HAJRI_REDIS_URL:/)
    expect(problems[1]).toMatch(/^HAJRI_PUBLIC_URL:/)
  })

  it('accepts the database URL forms docs/operators/configuration.md names', () => {
    for (const url of ['sqlite:./data/hajri.db', 'sqlite:/var/lib/hajri/hajri.db', 'sqlite::memory:']) {
      expect(loadCloudConfig({ HAJRI_DATABASE_URL: url }).databaseUrl).toBe(url)
    }
    for (const url of ['postgres://u:p@h/db', 'postgresql://h:5432/db?sslmode=require']) {
      expect(loadCloudConfig({ HAJRI_DATABASE_URL: url }).databaseUrl).toBe(url)
    }
  })

  it('reads HAJRI_TRUST_PROXY as a flag, a hop count, or a list of addresses', () => {
    const trust = (value: string) => loadCloudConfig({ HAJRI_TRUST_PROXY: value }).trustProxy
    expect(trust('false')).toBe(false)
    expect(trust('true')).toBe(true)
    expect(trust('2')).toBe(2)
    expect(trust('10.0.0.1,10.0.0.2')).toBe('10.0.0.1,10.0.0.2')
    expect(trust('127.0.0.1/8')).toBe('127.0.0.1/8')
  })

  it('accepts every log level pino knows', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      expect(loadCloudConfig({ HAJRI_LOG_LEVEL: level }).logLevel).toBe(level)
    }
  })

  it('takes numbers at their bounds and refuses them just outside', () => {
    const accepted: [string, string][] = [
      ['HAJRI_PORT', '0'],
      ['HAJRI_PORT', '65535'],
      ['HAJRI_PORT', '08080'],
      ['HAJRI_BODY_LIMIT_BYTES', '1024'],
      ['HAJRI_BODY_LIMIT_BYTES', String(64 * 1024 * 1024)],
      ['HAJRI_DATABASE_POOL_SIZE', '1'],
      ['HAJRI_DATABASE_POOL_SIZE', '1000'],
    ]
    for (const [name, value] of accepted)
      expect(problemsFor({ [name]: value }), `${name}=${value}`).toEqual([])
    expect(loadCloudConfig({ HAJRI_PORT: '08080' }).port).toBe(8080)
    const refused: [string, string][] = [
      ['HAJRI_PORT', '65536'],
      ['HAJRI_BODY_LIMIT_BYTES', '1023'],
      ['HAJRI_BODY_LIMIT_BYTES', String(64 * 1024 * 1024 + 1)],
      ['HAJRI_DATABASE_POOL_SIZE', '0'],
      ['HAJRI_DATABASE_POOL_SIZE', '1001'],
    ]
    for (const [name, value] of refused) {
      expect(problemsFor({ [name]: value }), `${name}=${value}`).toEqual([
        expect.stringMatching(new RegExp(`^${name}: .*"${value}"`)),
      ])
    }
  })

  it('refuses numbers that are not plain whole numbers', () => {
    for (const value of ['-1', '80.0', '1e3', ' 80', '80 ', '0x50', 'eighty', '+80']) {
      expect(problemsFor({ HAJRI_PORT: value }), value).toEqual([
        `HAJRI_PORT: must be a whole number from 0 to 65535, got "${value}"`,
      ])
    }
  })

  it('gives one message per wrong variable, naming the variable and the value', () => {
    expect(problemsFor({ HAJRI_DATABASE_URL: 'mysql://db/hajri' })).toEqual([
      'HAJRI_DATABASE_URL: must start with sqlite: or postgres://, got "mysql://db/hajri"',
    ])
    expect(problemsFor({ HAJRI_LOG_LEVEL: 'loud' })).toEqual([
      'HAJRI_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ])
    expect(problemsFor({ HAJRI_PORT: 'http' })).toEqual([
      'HAJRI_PORT: must be a whole number from 0 to 65535, got "http"',
    ])
  })

  it('reports every wrong variable at once, not just the first', () => {
    let error: unknown
    try {
      loadCloudConfig({
        HAJRI_DATABASE_URL: 'mysql://db/hajri',
        HAJRI_LOG_LEVEL: 'LOUD',
        HAJRI_PORT: '99999',
        HAJRI_BODY_LIMIT_BYTES: '1k',
        HAJRI_DATABASE_POOL_SIZE: '0',
        // Right ones are not mentioned.
        HAJRI_HOST: '0.0.0.0',
        HAJRI_PUBLIC_URL: 'https://hajri.example.com',
      })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    const { problems, message } = error as ConfigError
    expect(problems).toHaveLength(5)
    for (const name of [
      'HAJRI_DATABASE_URL',
      'HAJRI_LOG_LEVEL',
      'HAJRI_PORT',
      'HAJRI_BODY_LIMIT_BYTES',
      'HAJRI_DATABASE_POOL_SIZE',
    ]) {
      expect(
        problems.filter((p) => p.startsWith(`${name}:`)),
        name,
      ).toHaveLength(1)
      expect(message).toContain(name)
    }
    expect(message).not.toContain('HAJRI_HOST')
  })

  // 'sqlite:' passes the prefix check but names no file: opening it fails later, outside the
  // configuration report (and the CLI exits 1 "failed" rather than 2 "invalid configuration").
  it('reports a database URL it could not open along with the other wrong variables', () => {
    for (const url of ['sqlite:', 'sqlite://']) {
      const problems = problemsFor({ HAJRI_DATABASE_URL: url, HAJRI_PORT: 'x' })
      expect(
        problems.some((p) => p.startsWith('HAJRI_DATABASE_URL:')),
        url,
      ).toBe(true)
      expect(problems.some((p) => p.startsWith('HAJRI_PORT:'))).toBe(true)
    }
  })

  it('does not read process.env when given an environment', () => {
    const saved = process.env.HAJRI_PORT
    process.env.HAJRI_PORT = 'not-a-port'
    try {
      expect(loadCloudConfig({}).port).toBe(8080)
    } finally {
      if (saved === undefined) delete process.env.HAJRI_PORT
      else process.env.HAJRI_PORT = saved
    }
  })
})
