import { getEventListeners } from 'node:events'
import type { ServerResponse } from 'node:http'
import pino from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { RetryableError } from '../../../agent/uplink/retryable-error.js'
import { TokenClient } from '../../../agent/uplink/token-client.js'
import { TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { FakeCloud } from '../../support/fake-cloud.js'

const log = pino({ level: 'silent' })

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Polls (no fixed wait) until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

async function rejection(promise: Promise<unknown>): Promise<RetryableError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(error, 'expected a RetryableError').toBeInstanceOf(RetryableError)
  return error as RetryableError
}

/** RFC 6749 Appendix B: application/x-www-form-urlencoded decoding, `+` being a space. */
function formDecode(text: string): string {
  return decodeURIComponent(text.replaceAll('+', ' '))
}

describe('TokenClient against a scripted token endpoint', () => {
  /** Only its token endpoint is asked here. */
  const endpoint = new FakeCloud()
  const clients: (() => void)[] = []
  let clock: number

  beforeAll(() => endpoint.start())
  afterAll(async () => {
    for (const close of clients) close()
    await endpoint.stop()
  })
  beforeEach(() => {
    endpoint.reset()
    clock = Date.parse('2026-11-21T04:00:00Z')
  })

  function tokenClient(clientId = 'hjc_agent', clientSecret = 'hjs_secret'): TokenClient {
    const client = createHttpClient({ url: endpoint.url, timeoutSeconds: 5, concurrency: 1 })
    clients.push(client.close)
    return new TokenClient({
      http: client.http,
      clientId,
      clientSecret,
      scope: 'attendance:write',
      log,
      now: () => clock,
    })
  }

  it('asks for client_credentials with the configured scope', async () => {
    expect(await tokenClient().token()).toBe('tok-1')
    const [request] = endpoint.tokenRequests()
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(Object.fromEntries(request?.form ?? [])).toEqual({
      grant_type: 'client_credentials',
      scope: 'attendance:write',
    })
  })

  it('authenticates with client_secret_basic, each half form-encoded (RFC 6749 §2.3.1)', async () => {
    const clientId = 'Pune plant+1 %41:gate&x'
    const clientSecret = 'p@ss:w+rd %2F é'
    await tokenClient(clientId, clientSecret).token()
    const header = endpoint.tokenRequests()[0]?.headers.authorization ?? ''
    expect(header).toMatch(/^Basic [A-Za-z0-9+/]+=*$/)
    const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8')
    // Form-encoding leaves no ":" inside either half, so the first one is the separator.
    const [id, secret, ...rest] = decoded.split(':')
    expect(rest).toEqual([])
    // Encoded, not raw: a space is "+", and "+", "%", "&" are escapes of their own.
    expect(id).toBe('Pune+plant%2B1+%2541%3Agate%26x')
    expect(formDecode(id ?? '')).toBe(clientId)
    expect(formDecode(secret ?? '')).toBe(clientSecret)
    // Not sent a second way: RFC 6749 §2.3 allows one authentication method per request.
    expect(endpoint.tokenRequests()[0]?.form.has('client_secret')).toBe(false)
  })

  it('keeps the token while it is good: one request for many calls', async () => {
    const tokens = tokenClient()
    expect(await tokens.token()).toBe('tok-1')
    clock += 30 * 60_000
    expect(await tokens.token()).toBe('tok-1')
    expect(await tokens.token()).toBe('tok-1')
    expect(endpoint.tokenRequests()).toHaveLength(1)
  })

  it('refreshes five minutes before a one-hour token expires', async () => {
    const tokens = tokenClient()
    const issuedAt = clock
    await tokens.token()
    clock = issuedAt + 55 * 60_000 - 1
    expect(await tokens.token()).toBe('tok-1')
    clock = issuedAt + 55 * 60_000
    expect(await tokens.token()).toBe('tok-2')
    expect(endpoint.tokenRequests()).toHaveLength(2)
  })

  it('refreshes a short-lived token at half its life, never after it has expired', async () => {
    endpoint.expiresIn = 120
    const tokens = tokenClient()
    const issuedAt = clock
    await tokens.token()
    clock = issuedAt + 60_000 - 1
    expect(await tokens.token()).toBe('tok-1')
    clock = issuedAt + 60_000
    expect(await tokens.token()).toBe('tok-2')
  })

  it('shares one request among concurrent callers (single flight)', async () => {
    const tokens = tokenClient()
    endpoint.holdTokens = true
    const callers = Array.from({ length: 8 }, () => tokens.token())
    await until(() => endpoint.tokenRequests().length === 1)
    // Every caller is waiting on that one request; release it.
    for (const release of endpoint.held.splice(0)) release()
    expect(await Promise.all(callers)).toEqual(Array(8).fill('tok-1'))
    expect(endpoint.tokenRequests()).toHaveLength(1)
  })

  it('shares one refresh among callers arriving as the token is due', async () => {
    const tokens = tokenClient()
    await tokens.token()
    clock += 3600_000
    endpoint.holdTokens = true
    const callers = [tokens.token(), tokens.token(), tokens.token()]
    await until(() => endpoint.tokenRequests().length === 2)
    for (const release of endpoint.held.splice(0)) release()
    expect(await Promise.all(callers)).toEqual(['tok-2', 'tok-2', 'tok-2'])
    expect(endpoint.tokenRequests()).toHaveLength(2)
  })

  it('forgets a token the cloud refused, and fetches a new one', async () => {
    const tokens = tokenClient()
    const first = await tokens.token()
    tokens.invalidate(first)
    expect(await tokens.token()).toBe('tok-2')
    expect(endpoint.tokenRequests()).toHaveLength(2)
  })

  it('ignores a late invalidation of a token already replaced', async () => {
    // Two requests failed with the same old token: the second must not throw away the new one.
    const tokens = tokenClient()
    const old = await tokens.token()
    tokens.invalidate(old)
    expect(await tokens.token()).toBe('tok-2')
    tokens.invalidate(old)
    expect(await tokens.token()).toBe('tok-2')
    expect(endpoint.tokenRequests()).toHaveLength(2)
  })

  it('reports a refusal as a RetryableError with the OAuth error, and tries again on the next call', async () => {
    endpoint.tokenAnswers.push((_request, res) =>
      json(res, 401, { error: 'invalid_client', error_description: 'Unknown client, wrong secret.' }),
    )
    const tokens = tokenClient()
    const error = await rejection(tokens.token())
    expect(error.message).toBe('the cloud refused a token (invalid_client: Unknown client, wrong secret.)')
    // A failed request is not cached: the next call asks again.
    expect(await tokens.token()).toBe('tok-2')
  })

  it('reports a server error without an OAuth body as a RetryableError naming the status', async () => {
    endpoint.tokenAnswers.push((_request, res) => res.writeHead(503).end())
    expect((await rejection(tokenClient().token())).message).toBe('the cloud refused a token (HTTP 503)')
  })

  it('does not take a 200 without a usable token', async () => {
    endpoint.tokenAnswers.push((_request, res) => json(res, 200, { token_type: 'Bearer', expires_in: 3600 }))
    await rejection(tokenClient().token())
  })

  it("leaves no abort listener on the caller's signal, whether the token came or not", async () => {
    // The forwarder's signal lives as long as the agent: a listener left per call grew without end
    // through an outage (found by the simulator's tests: MaxListenersExceededWarning).
    const signal = new AbortController().signal
    const tokens = tokenClient()
    for (let i = 0; i < 12; i++) {
      endpoint.tokenAnswers.push((_request, res) => res.writeHead(503).end())
      await rejection(tokens.token(signal))
    }
    expect(await tokens.token(signal)).toBe('tok-13')
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
  })

  it('reports a dropped connection as a RetryableError', async () => {
    endpoint.tokenAnswers.push((_request, res) => res.socket?.destroy())
    expect((await rejection(tokenClient().token())).message).toMatch(/^token request failed: /)
  })
})

describe('TokenClient against the real cloud', () => {
  const cloud = new TestCloud('sqlite')
  let url: string
  let tenantId: string
  const close: (() => void)[] = []

  beforeAll(async () => {
    await cloud.start()
    url = await cloud.app.listen({ host: '127.0.0.1', port: 0 })
    tenantId = await cloud.createTenant()
  })
  afterAll(async () => {
    for (const c of close) c()
    await cloud.stop()
  })

  function tokenClient(clientId: string, clientSecret: string): TokenClient {
    const client = createHttpClient({ url, timeoutSeconds: 5, concurrency: 1 })
    close.push(client.close)
    return new TokenClient({ http: client.http, clientId, clientSecret, scope: 'attendance:write', log })
  }

  it('gets a token for a client id with spaces, +, %, : and &, which decodes back on the cloud', async () => {
    const clientId = 'Pune plant+1 %41:gate&x'
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'agent', scopes: ['attendance:write'], clientId },
      TEST_ACTOR,
    )
    expect(app.clientId).toBe(clientId)
    const token = await tokenClient(clientId, app.clientSecret).token()
    // The token is this app's: the cloud's introspection names the client it was issued to.
    const introspection = await cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: {
        authorization: `Basic ${Buffer.from(
          `${new URLSearchParams({ v: clientId }).toString().slice(2)}:${new URLSearchParams({ v: app.clientSecret }).toString().slice(2)}`,
        ).toString('base64')}`,
      },
      payload: { token },
    })
    expect(introspection.json()).toMatchObject({ active: true, client_id: clientId })
  })

  it('is refused with invalid_client for a wrong secret', async () => {
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'agent 2', scopes: ['attendance:write'] },
      TEST_ACTOR,
    )
    const error = await rejection(tokenClient(app.clientId, `${app.clientSecret}x`).token())
    expect(error.message).toContain('invalid_client')
  })
})
