import { Writable } from 'node:stream'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { openDatabase } from '../../../cloud/db/database.js'
import { bearer, createTestDatabaseUrl, TestCloud } from '../../support/cloud-harness.js'

const PUNCHES = '/api/public/v1/attendance/punches'
const EMPLOYEES = '/api/public/v1/employees'
const BODY_LIMIT = 1024 * 1024
const GENERATED_ID = /^req_[A-Za-z0-9_-]{16}$/

/** The RFC 9457 shape every error shares, with `instance` naming this response's request id. */
function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/)
  const requestId = res.headers['x-request-id']
  expect(requestId).toEqual(expect.any(String))
  const problem = res.json()
  expect(problem).toEqual({
    type: `urn:hajri:problem:${code}`,
    title: expect.any(String),
    status,
    code,
    instance: `urn:hajri:request:${requestId}`,
    // RFC 9457 §3.1: detail is optional; when present it is text.
    ...(problem.detail === undefined ? {} : { detail: expect.any(String) }),
    ...(problem.errors === undefined ? {} : { errors: expect.any(Array) }),
  })
  expect(problem.title.length).toBeGreaterThan(0)
  return problem
}

/** A problem of any code: the content type, a stable-looking code and the request id. */
function expectProblemShape(res: LightMyRequestResponse) {
  expect(res.headers['x-request-id']).toEqual(expect.any(String))
  expectProblem(res, res.statusCode, String(res.json().code))
  expect(res.json().code).toMatch(/^[a-z][a-z0-9_]*$/)
}

describe('errors and request ids', () => {
  const cloud = new TestCloud('sqlite')
  let key: string

  beforeAll(async () => {
    await cloud.start()
    const tenantId = await cloud.createTenant()
    key = await cloud.createApiKey(tenantId, ['attendance:write', 'employees:read'])
  })
  afterAll(() => cloud.stop())

  const postRaw = (payload: string, headers: Record<string, string>) =>
    cloud.app.inject({ method: 'POST', url: PUNCHES, headers: { ...bearer(key), ...headers }, payload })

  describe('bodies', () => {
    it('answers malformed JSON with 400 malformed_json', async () => {
      const res = await postRaw('{"employeeCode": "E001", ', { 'content-type': 'application/json' })
      expectProblem(res, 400, 'malformed_json')
    })

    it('answers a body that is not UTF-8 text with 400 malformed_json, not 500', async () => {
      const res = await cloud.app.inject({
        method: 'POST',
        url: PUNCHES,
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
      })
      expectProblem(res, 400, 'malformed_json')
    })

    it('answers an empty JSON body with 400 malformed_json', async () => {
      const res = await postRaw('', { 'content-type': 'application/json' })
      expectProblem(res, 400, 'malformed_json')
    })

    // Fastify parses text/plain by default; the API takes JSON only, and a JSON body sent as
    // text/plain should be told about its Content-Type, not that it "must be object".
    it('answers a text/plain body with 415 unsupported_media_type', async () => {
      const res = await postRaw('employeeCode=E001', { 'content-type': 'text/plain' })
      expectProblem(res, 415, 'unsupported_media_type')
    })

    it('answers a form body with 415 unsupported_media_type', async () => {
      const res = await postRaw('employeeCode=E001', { 'content-type': 'application/x-www-form-urlencoded' })
      expectProblem(res, 415, 'unsupported_media_type')
    })

    it('answers a body over the limit with 413 payload_too_large, and takes one at the limit', async () => {
      // A JSON object of exactly `size` bytes, with one unknown field as padding.
      const jsonOfSize = (size: number) => {
        const shell = '{"pad":""}'
        return `{"pad":"${'x'.repeat(size - shell.length)}"}`
      }
      const atLimit = jsonOfSize(BODY_LIMIT)
      expect(Buffer.byteLength(atLimit)).toBe(BODY_LIMIT)
      const over = await postRaw(jsonOfSize(BODY_LIMIT + 1), { 'content-type': 'application/json' })
      expectProblem(over, 413, 'payload_too_large')
      // At the limit the body is read and validated: the padding is an unknown field.
      const at = await postRaw(atLimit, { 'content-type': 'application/json' })
      expectProblem(at, 400, 'validation_failed')
    })

    it('authenticates before reading a body, so a stranger cannot make it parse one', async () => {
      for (const payload of ['{', `"${'x'.repeat(BODY_LIMIT + 1)}"`]) {
        const res = await cloud.app.inject({
          method: 'POST',
          url: PUNCHES,
          headers: { 'content-type': 'application/json' },
          payload,
        })
        expectProblem(res, 401, 'authentication_required')
      }
    })
  })

  describe('routes', () => {
    it('answers an unknown route with a 404 not_found problem', async () => {
      const problem = expectProblem(
        await cloud.app.inject({ method: 'GET', url: '/nowhere' }),
        404,
        'not_found',
      )
      expect(problem.detail).toContain('GET /nowhere')
    })

    it('answers an unknown method on a known path with a problem', async () => {
      const res = await cloud.app.inject({ method: 'DELETE', url: EMPLOYEES, headers: bearer(key) })
      expectProblem(res, 404, 'not_found')
    })

    it('does not echo the query string of an unknown route', async () => {
      const res = await cloud.app.inject({ method: 'GET', url: '/nowhere?token=s3cr3t-value' })
      const problem = expectProblem(res, 404, 'not_found')
      expect(res.body).not.toContain('s3cr3t-value')
      expect(problem.detail).toContain('/nowhere')
    })

    // Fastify answers these two before routing, with its own JSON, unless told otherwise.
    it('answers a URL that cannot be decoded with a problem and a request id', async () => {
      const res = await cloud.app.inject({ method: 'GET', url: `${EMPLOYEES}/%E0%A4%A` })
      expect(res.statusCode).toBe(400)
      expectProblemShape(res)
    })

    it('answers an over-long path parameter with a problem and a request id', async () => {
      const res = await cloud.app.inject({
        method: 'GET',
        url: `${EMPLOYEES}/${'E'.repeat(300)}`,
        headers: bearer(key),
      })
      expect(res.statusCode).toBe(414)
      expectProblemShape(res)
    })
  })

  describe('X-Request-Id', () => {
    it('is on every response, success or failure', async () => {
      const responses = [
        await cloud.app.inject({ method: 'GET', url: '/healthz' }),
        await cloud.app.inject({ method: 'GET', url: '/openapi.json' }),
        await cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(key) }),
        await cloud.app.inject({ method: 'HEAD', url: EMPLOYEES, headers: bearer(key) }),
        await cloud.app.inject({ method: 'GET', url: EMPLOYEES }),
        await cloud.app.inject({ method: 'GET', url: '/nowhere' }),
        await postRaw('{', { 'content-type': 'application/json' }),
        await postRaw('x=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      ]
      expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 401, 404, 400, 415])
      for (const res of responses) expect(res.headers['x-request-id']).toMatch(GENERATED_ID)
      // One id per request.
      expect(new Set(responses.map((r) => r.headers['x-request-id'])).size).toBe(responses.length)
    })

    it("echoes a caller's sane id, in the header and in a problem's instance", async () => {
      for (const id of ['abcdefgh', 'trace-1234.ABCD:5678_x', 'a'.repeat(128)]) {
        const ok = await cloud.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': id } })
        expect(ok.headers['x-request-id']).toBe(id)
        const failed = await cloud.app.inject({
          method: 'GET',
          url: '/nowhere',
          headers: { 'x-request-id': id },
        })
        expect(failed.headers['x-request-id']).toBe(id)
        expect(failed.json().instance).toBe(`urn:hajri:request:${id}`)
      }
    })

    it('replaces an id that is too short, too long or has characters a log should not hold', async () => {
      for (const id of [
        'short',
        'a'.repeat(129),
        'has spaces in it',
        '<script>alert(1)</script>',
        'back\\slash-in-the-id',
        'quote"inside-it',
        'ünïcödé-id-here',
      ]) {
        const res = await cloud.app.inject({
          method: 'GET',
          url: '/nowhere',
          headers: { 'x-request-id': id },
        })
        const given = res.headers['x-request-id']
        expect(given, id).toMatch(GENERATED_ID)
        expect(res.json().instance).toBe(`urn:hajri:request:${given}`)
      }
    })
  })
})

describe('server faults', () => {
  /** A logger whose lines a test can read. */
  function capturingLogger() {
    const lines: Record<string, unknown>[] = []
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line))
        done()
      },
    })
    return { lines, logger: pino({ level: 'info' }, stream) }
  }

  // Text a 500 must never show: the message, SQL, file paths and stack frames of the failure.
  const SECRET_MESSAGE = 'connect ECONNREFUSED 10.1.2.3:5432 while running SELECT key_hash FROM api_keys'
  const expectNothingInternal = (body: string) => {
    expect(body).not.toContain('ECONNREFUSED')
    expect(body).not.toContain('10.1.2.3')
    expect(body).not.toMatch(/select|api_keys|key_hash/i)
    expect(body).not.toMatch(/stack|\.ts:\d+|\.js:\d+|node_modules|\bat [A-Za-z.<]+ \(/)
  }

  describe('a handler that throws', () => {
    let app: FastifyInstance
    let drop: () => Promise<void>
    const log = capturingLogger()

    beforeAll(async () => {
      const target = await createTestDatabaseUrl('sqlite')
      drop = target.drop
      const database = openDatabase(target.url)
      app = await buildApp({
        config: { bodyLimitBytes: BODY_LIMIT, trustProxy: false, logLevel: 'info' },
        database,
        logger: log.logger,
      })
      app.get('/boom', async () => {
        throw new Error(SECRET_MESSAGE)
      })
      app.get('/boom-with-status', async () => {
        throw Object.assign(new Error(SECRET_MESSAGE), { statusCode: 502 })
      })
      app.get('/boom-not-an-error', async () => {
        throw SECRET_MESSAGE
      })
      await app.ready()
    })
    afterAll(async () => {
      await app.close()
      await drop()
    })

    for (const url of ['/boom', '/boom-with-status', '/boom-not-an-error']) {
      it(`answers ${url} with a bare 500 internal_error`, async () => {
        const res = await app.inject({ method: 'GET', url })
        expectProblem(res, 500, 'internal_error')
        expectNothingInternal(res.body)
      })
    }

    it('logs the failure, with its details, under the request id the caller was given', async () => {
      const res = await app.inject({
        method: 'GET',
        url: '/boom',
        headers: { 'x-request-id': 'trace-500-abcdef' },
      })
      expect(res.statusCode).toBe(500)
      const logged = log.lines.find((l) => l.requestId === 'trace-500-abcdef' && l.level === 50)
      expect(logged).toBeDefined()
      expect(JSON.stringify(logged)).toContain('ECONNREFUSED')
    })
  })

  describe('a database that is gone', () => {
    const cloud = new TestCloud('sqlite')
    let key: string

    beforeAll(async () => {
      await cloud.start()
      const tenantId = await cloud.createTenant()
      key = await cloud.createApiKey(tenantId, ['employees:read'])
      await cloud.database.close()
    })
    afterAll(() => cloud.stop())

    it('answers 500 internal_error and says nothing about the database', async () => {
      const res = await cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(key) })
      const problem = expectProblem(res, 500, 'internal_error')
      expectNothingInternal(res.body)
      expect(res.body).not.toMatch(/destroy|sqlite|kysely|driver/i)
      expect(problem.detail).toMatch(/instance/i)
    })
  })
})
