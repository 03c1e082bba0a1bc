import pino from 'pino'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { createHttpClient } from '../../../agent/uplink/http-client.js'
import { PunchUplink } from '../../../agent/uplink/punch-uplink.js'
import { RetryableError } from '../../../agent/uplink/retryable-error.js'
import { TokenClient } from '../../../agent/uplink/token-client.js'
import { batchAnswer } from '../../support/batch-answer.js'
import { BATCH_PATH, FakeCloud, PUNCH_PATH, problem, send } from '../../support/fake-cloud.js'
import { unusedPort } from '../../support/unused-port.js'

const log = pino({ level: 'silent' })
function punch(i: number, overrides: Partial<SpooledPunch> = {}): SpooledPunch {
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: `E${i}`,
    punchType: i % 2 ? 'OUT' : 'IN',
    punchedAt: `2026-11-21T09:${String(i % 60).padStart(2, '0')}:00+05:30`,
    receivedAt: '2026-11-21T03:40:00.000000Z',
    ...overrides,
  }
}

/** What the cloud's PunchInput should be for a spooled punch: receivedAt is the agent's business. */
function input(p: SpooledPunch) {
  return {
    employeeCode: p.employeeCode,
    punchType: p.punchType,
    punchedAt: p.punchedAt,
    deviceId: p.deviceId,
    source: 'hajri-agent',
    externalId: p.id,
  }
}

const cloud = new FakeCloud()
let uplink: PunchUplink
let closeClient: () => void

beforeAll(async () => {
  await cloud.start()
})
afterAll(async () => {
  await cloud.stop()
})
beforeEach(() => {
  cloud.reset()
  closeClient?.()
  const client = createHttpClient({ url: cloud.url, timeoutSeconds: 5, concurrency: 2 })
  closeClient = client.close
  const tokens = new TokenClient({
    http: client.http,
    clientId: 'hjc_agent',
    clientSecret: 'hjs_secret',
    scope: 'attendance:write',
    log,
  })
  uplink = new PunchUplink({ http: client.http, tokens })
})
afterAll(() => closeClient?.())

/** The error `promise` rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<RetryableError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(error, 'expected a RetryableError').toBeInstanceOf(RetryableError)
  return error as RetryableError
}

describe('one punch: the single endpoint', () => {
  it('posts the punch with its id as externalId and Idempotency-Key, from source hajri-agent', async () => {
    const p = punch(1)
    expect(await uplink.send([p])).toEqual([{ punch: p, accepted: true }])
    const [request] = cloud.punchRequests()
    expect(request?.method).toBe('POST')
    expect(request?.url).toBe(PUNCH_PATH)
    expect(request?.headers['idempotency-key']).toBe(p.id)
    expect(request?.headers.authorization).toBe('Bearer tok-1')
    expect(request?.headers['content-type']).toMatch(/^application\/json/)
    expect(request?.json).toEqual(input(p))
  })

  it.each([422, 400])('keeps the problem of a %i: that punch is refused for good', async (status) => {
    const refusal = problem(status, 'employee_not_found', 'No employee E1.')
    cloud.answers.push((_r, res) => send(res, status, refusal))
    const p = punch(1)
    expect(await uplink.send([p])).toEqual([{ punch: p, accepted: false, problem: refusal }])
  })

  it('names the status when a refusal has no problem body', async () => {
    cloud.answers.push((_r, res) => res.writeHead(422, { 'content-type': 'text/plain' }).end('nope'))
    const [outcome] = await uplink.send([punch(1)])
    expect(outcome).toMatchObject({ accepted: false, problem: { status: 422, title: 'HTTP 422' } })
  })
})

describe('several punches: the batch endpoint', () => {
  it('posts them together, each with its id as externalId and no Idempotency-Key', async () => {
    const punches = [punch(1), punch(2), punch(3)]
    cloud.answers.push((r, res) =>
      send(
        res,
        200,
        batchAnswer(r.json.punches.map((_: unknown, index: number) => ({ index, status: 'created' }))),
      ),
    )
    expect(await uplink.send(punches)).toEqual(punches.map((p) => ({ punch: p, accepted: true })))
    const [request] = cloud.punchRequests()
    expect(request?.url).toBe(BATCH_PATH)
    expect(request?.json).toEqual({ punches: punches.map(input) })
    expect(request?.json.punches.map((p: { externalId: string }) => p.externalId)).toEqual(
      punches.map((p) => p.id),
    )
    // A key would make the cloud replay its first answer to the same punches for a day, refusing
    // again a punch whose employee has since been added; externalId alone prevents duplicates.
    expect(request?.headers['idempotency-key']).toBeUndefined()
  })

  it('reads an outcome per punch: created and duplicate accepted, 422 and 400 refused with their problem', async () => {
    const punches = [punch(1), punch(2), punch(3), punch(4)]
    const unknown = problem(422, 'employee_not_found', 'No employee E2.')
    const invalid = problem(400, 'validation_failed', 'This punch is not valid; see errors.')
    // Results out of order: they are matched by index, not by position.
    cloud.answers.push((_r, res) =>
      send(
        res,
        200,
        batchAnswer([
          { index: 3, status: 'rejected', problem: invalid },
          { index: 0, status: 'created' },
          { index: 2, status: 'duplicate' },
          { index: 1, status: 'rejected', problem: unknown },
        ]),
      ),
    )
    expect(await uplink.send(punches)).toEqual([
      { punch: punches[0], accepted: true },
      { punch: punches[1], accepted: false, problem: unknown },
      { punch: punches[2], accepted: true },
      { punch: punches[3], accepted: false, problem: invalid },
    ])
  })

  it('trusts no answer that leaves a punch without a usable result: the whole batch is tried again', async () => {
    cloud.answers.push((_r, res) => send(res, 200, batchAnswer([{ index: 0, status: 'created' }])))
    expect((await rejection(uplink.send([punch(1), punch(2)]))).message).toContain('punch 1')
    // A rejection the cloud calls temporary is not a reason to park the punch.
    cloud.answers.push((_r, res) =>
      send(
        res,
        200,
        batchAnswer([
          { index: 0, status: 'created' },
          { index: 1, status: 'rejected', problem: problem(503, 'unavailable', 'later') },
        ]),
      ),
    )
    await rejection(uplink.send([punch(1), punch(2)]))
  })

  it.each([
    ['without its summary', '{"results":[{"index":0,"status":"created"},{"index":1,"status":"created"}]}'],
    [
      'with a status it does not know',
      JSON.stringify(batchAnswer([{ index: 0, status: 'stored' as never }])),
    ],
    [
      'with a refusal whose problem is not one',
      JSON.stringify(batchAnswer([{ index: 0, status: 'rejected', problem: { status: 422 } }])),
    ],
    ['that is a page, not JSON', '<html><body>Gateway login</body></html>'],
    ['that is cut off', JSON.stringify(batchAnswer([{ index: 0, status: 'created' }])).slice(0, 40)],
  ])('settles nothing on a 200 %s: the whole batch is tried again', async (_what, body) => {
    cloud.answers.push((_r, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body))
    const error = await rejection(uplink.send([punch(1), punch(2)]))
    expect(error.message).toContain('the batch answer is malformed')
  })

  it('reads an answer with fields this agent does not know (a newer cloud)', async () => {
    const answer = batchAnswer([
      { index: 0, status: 'created' },
      { index: 1, status: 'duplicate' },
    ])
    cloud.answers.push((_r, res) =>
      send(res, 200, {
        ...answer,
        results: answer.results.map((r) => ({ ...r, note: 'new' })),
        cursor: 'new too',
      }),
    )
    expect(await uplink.send([punch(1), punch(2)])).toEqual([
      { punch: punch(1), accepted: true },
      { punch: punch(2), accepted: true },
    ])
  })

  it('sends each punch alone when the batch as a whole is refused with a 400', async () => {
    const punches = [punch(1), punch(2), punch(3)]
    const unknown = problem(422, 'employee_not_found', 'No employee E2.')
    cloud.answers.push(
      (_r, res) => send(res, 400, problem(400, 'validation_failed', 'The body is not a batch.')),
      (_r, res) => send(res, 201, {}),
      (_r, res) => send(res, 422, unknown),
      (_r, res) => send(res, 201, {}),
    )
    expect(await uplink.send(punches)).toEqual([
      { punch: punches[0], accepted: true },
      { punch: punches[1], accepted: false, problem: unknown },
      { punch: punches[2], accepted: true },
    ])
    const requests = cloud.punchRequests()
    expect(requests.map((r) => r.url)).toEqual([BATCH_PATH, PUNCH_PATH, PUNCH_PATH, PUNCH_PATH])
    expect(requests.slice(1).map((r) => r.headers['idempotency-key'])).toEqual(punches.map((p) => p.id))
    expect(requests.slice(1).map((r) => r.json)).toEqual(punches.map(input))
  })
})

describe('a refused token', () => {
  it('gets a new token on a 401 and tries once more with it', async () => {
    cloud.answers.push((_r, res) => send(res, 401, problem(401, 'invalid_token', 'expired')))
    const p = punch(1)
    expect(await uplink.send([p])).toEqual([{ punch: p, accepted: true }])
    const requests = cloud.punchRequests()
    expect(requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2'])
    // The retry is the same request: same key, same body.
    expect(requests[1]?.headers['idempotency-key']).toBe(p.id)
    expect(requests[1]?.json).toEqual(requests[0]?.json)
    expect(cloud.tokenRequests()).toHaveLength(2)
  })

  it('does not loop on a second 401: that is for an operator, and retried later', async () => {
    cloud.answers.push(
      (_r, res) => send(res, 401, problem(401, 'invalid_token', 'no')),
      (_r, res) => send(res, 401, problem(401, 'invalid_token', 'still no')),
    )
    const error = await rejection(uplink.send([punch(1), punch(2)]))
    expect(error.message).toContain('401')
    expect(cloud.punchRequests()).toHaveLength(2)
    expect(cloud.tokenRequests()).toHaveLength(2)
  })
})

describe('failures worth retrying', () => {
  it('turns a 429 into a RetryableError carrying Retry-After in seconds', async () => {
    cloud.answers.push((_r, res) =>
      send(res, 429, problem(429, 'rate_limited', 'Slow down.'), { 'retry-after': '7' }),
    )
    const error = await rejection(uplink.send([punch(1)]))
    expect(error.hintMs).toBe(7000)
    expect(error.message).toBe('the cloud answered 429 (rate_limited: Slow down.)')
  })

  it('reads a Retry-After given as an HTTP-date', async () => {
    // HTTP dates have whole seconds; the hint is measured from the moment the answer is read.
    const at = Math.ceil(Date.now() / 1000) * 1000 + 60_000
    cloud.answers.push((_r, res) =>
      send(res, 503, problem(503, 'unavailable', 'Maintenance.'), {
        'retry-after': new Date(at).toUTCString(),
      }),
    )
    const before = Date.now()
    const error = await rejection(uplink.send([punch(1), punch(2)]))
    const after = Date.now()
    expect(error.hintMs).toBeGreaterThanOrEqual(at - after)
    expect(error.hintMs).toBeLessThanOrEqual(at - before)
  })

  it('reads RateLimit-Reset when there is no Retry-After', async () => {
    cloud.answers.push((_r, res) =>
      send(res, 429, problem(429, 'rate_limited', 'Slow down.'), {
        'ratelimit-limit': '100',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '42',
      }),
    )
    expect((await rejection(uplink.send([punch(1)]))).hintMs).toBe(42_000)
  })

  it.each([500, 502, 503, 504])('retries a %i, with no hint when the cloud gives none', async (status) => {
    cloud.answers.push((_r, res) => res.writeHead(status).end())
    const error = await rejection(uplink.send([punch(1), punch(2)]))
    expect(error.hintMs).toBeUndefined()
    expect(error.message).toBe(`the cloud answered ${status}`)
  })

  it('retries, not parks, an answer it does not expect for a punch (403: credentials to fix)', async () => {
    cloud.answers.push((_r, res) => send(res, 403, problem(403, 'insufficient_scope', 'No.')))
    await rejection(uplink.send([punch(1)]))
  })

  it('turns a connection the cloud drops into a RetryableError', async () => {
    cloud.answers.push((_r, res) => res.socket?.destroy())
    expect((await rejection(uplink.send([punch(1)]))).message).toMatch(/^the cloud did not answer: /)
  })

  it('turns a cloud that is not listening into a RetryableError', async () => {
    // A port that was just free: nothing listens there.
    const port = await unusedPort()
    const client = createHttpClient({ url: `http://127.0.0.1:${port}`, timeoutSeconds: 5, concurrency: 1 })
    try {
      const tokens = new TokenClient({
        http: client.http,
        clientId: 'hjc_agent',
        clientSecret: 'hjs_secret',
        scope: 'attendance:write',
        log,
      })
      const down = new PunchUplink({ http: client.http, tokens })
      expect((await rejection(down.send([punch(1)]))).message).toContain('ECONNREFUSED')
    } finally {
      client.close()
    }
  })

  it('abandons a request when its signal aborts, as a RetryableError', async () => {
    const controller = new AbortController()
    // The cloud never answers; the agent is stopping.
    cloud.answers.push(() => controller.abort())
    await rejection(uplink.send([punch(1)], controller.signal))
  })
})
