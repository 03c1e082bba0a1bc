/**
 * Found by the chaos test (test/system/e2e/chaos-postgres.test.ts): after PostgreSQL restarted,
 * the agent waited up to a minute before it tried again. hajri-cloud's rate-limit hook puts
 * RateLimit-Reset (the seconds until the credential's quota starts again) on every answer after
 * it, a 500 included, and the agent took it as the wait the cloud asked for. RateLimit-Reset is a
 * reason to wait only on a 429; a 5xx is retried on the agent's own backoff unless it carries a
 * Retry-After.
 */
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { PunchUplink } from '../../../agent/uplink/punch-uplink.js'
import { RetryableError } from '../../../agent/uplink/retryable-error.js'
import { TokenClient } from '../../../agent/uplink/token-client.js'
import { FakeCloud } from '../../support/fake-cloud.js'

/** The rate-limit headers hajri-cloud sends with every authenticated answer (cloud/http/rate-limit.ts). */
const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': '1000',
  'ratelimit-remaining': '999',
  'ratelimit-reset': '60',
}

const punch: SpooledPunch = {
  id: `hjp_${'0'.repeat(32)}`,
  deviceId: 'gate-1',
  employeeCode: 'E1',
  punchType: 'IN',
  punchedAt: '2026-11-21T09:00:00+05:30',
  receivedAt: '2026-11-21T03:30:00.000000Z',
}

describe('a retryable answer carrying the rate-limit headers', () => {
  const cloud = new FakeCloud()
  let next: { status: number; headers: Record<string, string> } = { status: 500, headers: {} }
  let uplink: PunchUplink
  let close: () => void

  beforeAll(async () => {
    cloud.punchAnswer = (_request, res) => {
      res.writeHead(next.status, { 'content-type': 'application/problem+json', ...next.headers })
      res.end(JSON.stringify({ status: next.status, code: 'internal_error', title: 'Internal Server Error' }))
    }
    await cloud.start()
    const client = createHttpClient({ url: cloud.url, timeoutSeconds: 5, concurrency: 2 })
    close = client.close
    const tokens = new TokenClient({
      http: client.http,
      clientId: 'hjc_agent',
      clientSecret: 'hjs_secret',
      scope: 'attendance:write',
      log: pino({ level: 'silent' }),
    })
    uplink = new PunchUplink({ http: client.http, tokens })
  })
  afterAll(async () => {
    close()
    await cloud.stop()
  })

  const hintOf = async (status: number, headers: Record<string, string>) => {
    next = { status, headers }
    const error = await uplink.send([punch]).catch((err: unknown) => err)
    expect(error).toBeInstanceOf(RetryableError)
    return (error as RetryableError).hintMs
  }

  it.each([500, 502, 503, 504])('a %i: no wait for the quota, which has not run out', async (status) => {
    expect(await hintOf(status, RATE_LIMIT_HEADERS)).toBeUndefined()
  })

  it('a 503 with Retry-After: the wait the cloud asks for', async () => {
    expect(await hintOf(503, { ...RATE_LIMIT_HEADERS, 'retry-after': '7' })).toBe(7000)
  })

  it('a 429: the wait until the quota starts again', async () => {
    expect(
      await hintOf(429, { ...RATE_LIMIT_HEADERS, 'ratelimit-remaining': '0', 'ratelimit-reset': '42' }),
    ).toBe(42_000)
  })
})
