/**
 * System components the tests use where users have them (docs/decisions/0031-real-components-in-tests.md).
 * Each is found at an address from the environment with a local default. When one is absent its tests are
 * skipped with a one-line reason, unless HAJRI_TEST_REQUIRE_ALL=1 (CI), where that is a failure instead.
 */
import pg from 'pg'

export const REQUIRE_ALL = process.env.HAJRI_TEST_REQUIRE_ALL === '1'

export const POSTGRES_URL = process.env.HAJRI_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test'

export interface Availability {
  /** Undefined when the component is there; else why its tests are skipped. */
  skipReason: string | undefined
}

async function check(
  name: string,
  address: string,
  envVar: string,
  probe: () => Promise<void>,
): Promise<Availability> {
  try {
    await probe()
    return { skipReason: undefined }
  } catch (err) {
    const reason = `${name} not reachable at ${address} (${(err as Error).message}); set ${envVar}`
    if (REQUIRE_ALL) throw new Error(`HAJRI_TEST_REQUIRE_ALL=1 but ${reason}`)
    console.warn(`skipping ${name} tests: ${reason}`)
    return { skipReason: reason }
  }
}

let postgres: Promise<Availability> | undefined

export function postgresAvailability(): Promise<Availability> {
  postgres ??= check('PostgreSQL', POSTGRES_URL, 'HAJRI_TEST_POSTGRES_URL', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 })
    await client.connect()
    try {
      await client.query('select 1')
    } finally {
      await client.end()
    }
  })
  return postgres
}

export const REDIS_URL = process.env.HAJRI_TEST_REDIS_URL || 'redis://127.0.0.1:6379'

let redis: Promise<Availability> | undefined

export function redisAvailability(): Promise<Availability> {
  redis ??= check('Redis', REDIS_URL, 'HAJRI_TEST_REDIS_URL', async () => {
    const { Redis } = await import('ioredis')
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000 })
    try {
      await client.connect()
      await client.ping()
    } finally {
      client.disconnect()
    }
  })
  return redis
}

export const MOSQUITTO_URL = process.env.HAJRI_TEST_MOSQUITTO_URL || 'mqtt://127.0.0.1:1883'

let mosquitto: Promise<Availability> | undefined

/** An MQTT broker such as Mosquitto (for the agent's external-broker mode). */
export function mosquittoAvailability(): Promise<Availability> {
  mosquitto ??= check('Mosquitto', MOSQUITTO_URL, 'HAJRI_TEST_MOSQUITTO_URL', async () => {
    const { connectAsync } = await import('mqtt')
    const client = await connectAsync(MOSQUITTO_URL, { connectTimeout: 3000, reconnectPeriod: 0 })
    await client.endAsync()
  })
  return mosquitto
}

let socat: Promise<Availability> | undefined

/** socat, for pseudo-terminal pairs that stand in for a serial cable with the real serialport bindings. */
export function socatAvailability(): Promise<Availability> {
  socat ??= check('socat', 'PATH', 'PATH (install the socat package)', async () => {
    const { execFile } = await import('node:child_process')
    await new Promise<void>((resolve, reject) =>
      execFile('socat', ['-V'], (err) => (err ? reject(new Error('socat is not installed')) : resolve())),
    )
  })
  return socat
}
