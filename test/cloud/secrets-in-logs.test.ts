import { Writable } from 'node:stream'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../cloud/app.js'
import { ACCESS_TOKEN, API_KEY, CLIENT_SECRET, type SecretKind } from '../../cloud/auth/secret-format.js'
import { runCli } from '../../cloud/cli.js'
import { loggerOptions, REDACT_PATHS } from '../../cloud/logger-options.js'
import { SCOPES } from '../../shared/scopes.js'
import { nowMicros } from '../../shared/time.js'
import { captureCli } from '../support/cli-capture.js'
import { bearer, employee, TEST_ACTOR, TestCloud } from '../support/cloud-harness.js'

/**
 * A full test run's logs contain no secret (docs/decisions/0018-no-secrets-in-logs.md): the test greps them
 * for every key, secret and token it created. The app logs at trace, with the product's redaction, into
 * memory; every credential flow runs against it, successes and failures; then the log is searched
 * for every secret, whole and for its random part alone. The tests of the first suite run in order
 * and share the one log: the last one greps what all the others made it write.
 */

const EMPLOYEES = '/api/public/v1/employees'
const PUNCHES = '/api/public/v1/attendance/punches'
const HOUR = 3_600_000_000

/** A pino destination that keeps every line in memory. */
class MemoryLog extends Writable {
  text = ''
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8')
    done()
  }

  lines(): Record<string, unknown>[] {
    return this.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

/** Every secret a test made, with the parts that would still give it away if logged alone. */
class Secrets {
  readonly values = new Set<string>()

  add(value: string): string {
    this.values.add(value)
    for (const kind of [API_KEY, CLIENT_SECRET, ACCESS_TOKEN] as SecretKind[]) {
      // The CSPRNG part alone: a log that cut off the prefix or the checksum would still leak it.
      if (value.startsWith(kind.prefix)) this.values.add(value.slice(kind.prefix.length, -6))
    }
    return value
  }

  /** The secrets found in `text`, for a failure message that says which. */
  foundIn(text: string): string[] {
    return [...this.values].filter((secret) => text.includes(secret))
  }
}

function basic(clientId: string, clientSecret: string): string {
  // RFC 6749 §2.3.1: each half form-encoded before joining.
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`
}

function appConfig(oauthRateLimitPerIp: number) {
  return {
    bodyLimitBytes: 1024 * 1024,
    trustProxy: false,
    logLevel: 'trace' as const,
    oauthRateLimitPerIp,
    oauthRateLimitPerClient: 1_000_000,
  }
}

describe('secrets never reach the logs', () => {
  const cloud = new TestCloud('sqlite')
  const log = new MemoryLog()
  const secrets = new Secrets()
  const responses: LightMyRequestResponse[] = []
  const tenantIds: string[] = []
  let app: FastifyInstance
  /** The same app with a low OAuth limit per address, to log refused token requests too. */
  let strictApp: FastifyInstance

  beforeAll(async () => {
    await cloud.start()
    const logger = pino(loggerOptions('trace'), log)
    for (const perIp of [1_000_000, 2]) {
      const built = await buildApp({
        config: appConfig(perIp),
        database: cloud.database,
        logger,
        closeDatabase: false,
        now: cloud.now,
      })
      await built.ready()
      if (perIp === 2) strictApp = built
      else app = built
    }
  })
  afterAll(async () => {
    await app?.close()
    await strictApp?.close()
    await cloud.stop()
  })

  /** Sends a request to the app and keeps its answer, whose request id the log must name. */
  async function call(
    options: InjectOptions,
    target: FastifyInstance = app,
  ): Promise<LightMyRequestResponse> {
    const res = await target.inject(options)
    responses.push(res)
    return res
  }

  const getEmployees = (headers: Record<string, string>) => call({ method: 'GET', url: EMPLOYEES, headers })

  async function token(
    form: Record<string, string>,
    options: { authorization?: string; json?: boolean; target?: FastifyInstance } = {},
  ): Promise<LightMyRequestResponse> {
    const res = await call(
      {
        method: 'POST',
        url: '/api/oauth/token',
        headers: {
          'content-type': options.json ? 'application/json' : 'application/x-www-form-urlencoded',
          ...(options.authorization ? { authorization: options.authorization } : {}),
        },
        payload: options.json ? JSON.stringify(form) : new URLSearchParams(form).toString(),
      },
      options.target,
    )
    if (res.statusCode === 200) secrets.add(res.json().access_token)
    return res
  }

  it('runs every credential flow, successes and failures, with the app logging at trace', async () => {
    const tenant = await cloud.services.tenants.create({
      name: 'Log tenant',
      adminEmail: 'logs@example.test',
    })
    secrets.add(tenant.adminPassword)
    const tenantId = tenant.tenantId
    tenantIds.push(tenantId)
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    const createKey = async (
      scopes: string[],
      options: { rateLimitPerMinute?: number; expiresInSeconds?: number } = {},
    ) => {
      const created = await cloud.services.apiKeys.create(tenantId, { scopes, ...options }, TEST_ACTOR)
      secrets.add(created.key)
      return created
    }

    // API keys: used, on every public route kind; refused for every reason.
    const full = await createKey([...SCOPES])
    expect((await getEmployees(bearer(full.key))).statusCode).toBe(200)
    expect((await getEmployees({ authorization: `bearer ${full.key}` })).statusCode).toBe(200)
    expect(
      (await call({ method: 'GET', url: `${EMPLOYEES}/E001`, headers: bearer(full.key) })).statusCode,
    ).toBe(200)
    const punch = {
      employeeCode: 'E001',
      punchType: 'IN',
      punchedAt: new Date(Date.now() - 3_600_000).toISOString(),
      deviceId: 'gate-1',
      externalId: 'log-punch-1',
    }
    expect(
      (
        await call({
          method: 'POST',
          url: PUNCHES,
          headers: { ...bearer(full.key), 'idempotency-key': 'log-1' },
          payload: punch,
        })
      ).statusCode,
    ).toBe(201)
    expect((await call({ method: 'GET', url: PUNCHES, headers: bearer(full.key) })).statusCode).toBe(200)
    // Client errors with a valid key: validation, malformed JSON, unknown employee.
    expect(
      (
        await call({
          method: 'POST',
          url: PUNCHES,
          headers: bearer(full.key),
          payload: { ...punch, punchType: 'x' },
        })
      ).statusCode,
    ).toBe(400)
    expect(
      (
        await call({
          method: 'POST',
          url: PUNCHES,
          headers: { ...bearer(full.key), 'content-type': 'application/json' },
          payload: `{"employeeCode": "${full.key}"`,
        })
      ).statusCode,
    ).toBe(400)
    expect(
      (await call({ method: 'GET', url: `${EMPLOYEES}/E404`, headers: bearer(full.key) })).statusCode,
    ).toBe(404)

    const readOnly = await createKey(['attendance:read'])
    expect((await getEmployees(bearer(readOnly.key))).statusCode).toBe(403)
    const revoked = await createKey(['employees:read'])
    await cloud.services.apiKeys.revoke(tenantId, revoked.id, TEST_ACTOR)
    expect((await getEmployees(bearer(revoked.key))).statusCode).toBe(401)
    cloud.fixedNow = nowMicros() - 2 * HOUR
    const expired = await createKey(['employees:read'], { expiresInSeconds: 60 })
    cloud.fixedNow = undefined
    expect((await getEmployees(bearer(expired.key))).statusCode).toBe(401)
    const mistyped = `${full.key.slice(0, -1)}${full.key.endsWith('A') ? 'B' : 'A'}`
    const malformed = [
      `Bearer ${mistyped}`,
      `Bearer ${full.key.slice(0, -3)}`,
      `Bearer ${full.key};x`,
      `Bearer ${full.key} ${full.key}`,
      full.key,
      `Basic ${Buffer.from(`${full.key}:`).toString('base64')}`,
      `Token ${full.key}`,
    ]
    secrets.add(Buffer.from(`${full.key}:`).toString('base64'))
    for (const authorization of malformed)
      expect((await getEmployees({ authorization })).statusCode).toBe(401)
    expect((await getEmployees({ ...bearer(full.key), origin: 'https://hr.example.com' })).statusCode).toBe(
      403,
    )
    const limited = await createKey(['employees:read'], { rateLimitPerMinute: 1 })
    expect((await getEmployees(bearer(limited.key))).statusCode).toBe(200)
    expect((await getEmployees(bearer(limited.key))).statusCode).toBe(429)

    // OAuth apps: a generated client id and a chosen one that needs form-encoding.
    const generated = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'generated', scopes: [...SCOPES], rateLimitPerMinute: 2 },
      TEST_ACTOR,
    )
    secrets.add(generated.clientSecret)
    const chosen = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'chosen', scopes: ['employees:read', 'attendance:read'], clientId: 'acme payroll:+%/1' },
      TEST_ACTOR,
    )
    secrets.add(chosen.clientSecret)
    const basicGenerated = basic(generated.clientId, generated.clientSecret)
    const basicChosen = basic(chosen.clientId, chosen.clientSecret)
    secrets.add(basicGenerated.slice('Basic '.length))
    secrets.add(basicChosen.slice('Basic '.length))

    // Tokens by client_secret_basic, client_secret_post (form and JSON), with and without scope.
    const viaBasic = await token({ grant_type: 'client_credentials' }, { authorization: basicChosen })
    expect(viaBasic.statusCode, viaBasic.body).toBe(200)
    const viaPost = await token({
      grant_type: 'client_credentials',
      client_id: generated.clientId,
      client_secret: generated.clientSecret,
    })
    expect(viaPost.statusCode, viaPost.body).toBe(200)
    const viaJson = await token(
      {
        grant_type: 'client_credentials',
        client_id: chosen.clientId,
        client_secret: chosen.clientSecret,
        scope: 'attendance:read',
      },
      { json: true },
    )
    expect(viaJson.statusCode, viaJson.body).toBe(200)
    const narrowToken: string = viaJson.json().access_token
    const appToken: string = viaPost.json().access_token
    const chosenToken: string = viaBasic.json().access_token

    // Token requests that fail: wrong secret, near-miss secret, bad scope, bad grant, both methods.
    const nearMiss = `${chosen.clientSecret.slice(0, -1)}${chosen.clientSecret.endsWith('A') ? 'B' : 'A'}`
    for (const [form, options] of [
      [{ grant_type: 'client_credentials', client_id: chosen.clientId, client_secret: nearMiss }, {}],
      [{ grant_type: 'client_credentials' }, { authorization: basic(chosen.clientId, nearMiss) }],
      [{ grant_type: 'client_credentials', scope: 'admin' }, { authorization: basicChosen }],
      [{ grant_type: 'password' }, { authorization: basicChosen }],
      [
        { grant_type: 'client_credentials', client_secret: chosen.clientSecret },
        { authorization: basicChosen },
      ],
      [
        { grant_type: 'client_credentials', client_id: chosen.clientId, client_secret: chosen.clientSecret },
        { json: true, authorization: 'Basic !!' },
      ],
    ] as [Record<string, string>, { authorization?: string; json?: boolean }][]) {
      const res = await token(form, options)
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400)
    }
    secrets.add(Buffer.from(`${encodeURIComponent(chosen.clientId)}:${nearMiss}`).toString('base64'))
    // Refused by the per-address limit (2 a minute on this app).
    for (let i = 0; i < 3; i++) {
      await token(
        {
          grant_type: 'client_credentials',
          client_id: generated.clientId,
          client_secret: generated.clientSecret,
        },
        { target: strictApp },
      )
    }
    expect(responses.at(-1)?.statusCode).toBe(429)

    // Tokens in use: allowed, wrong scope, over the app's limit, from a browser.
    expect((await getEmployees(bearer(chosenToken))).statusCode).toBe(200)
    expect((await getEmployees(bearer(narrowToken))).statusCode).toBe(403)
    expect((await call({ method: 'GET', url: PUNCHES, headers: bearer(narrowToken) })).statusCode).toBe(200)
    expect((await getEmployees(bearer(appToken))).statusCode).toBe(200)
    expect((await getEmployees(bearer(appToken))).statusCode).toBe(200)
    expect((await getEmployees(bearer(appToken))).statusCode).toBe(429)
    expect((await getEmployees({ ...bearer(chosenToken), origin: 'null' })).statusCode).toBe(403)
    const mistypedToken = `${chosenToken.slice(0, -1)}${chosenToken.endsWith('A') ? 'B' : 'A'}`
    expect((await getEmployees(bearer(mistypedToken))).statusCode).toBe(401)

    // Introspection and revocation, by both methods, in form and JSON bodies.
    const introspect = await call({
      method: 'POST',
      url: '/api/oauth/introspect',
      headers: { authorization: basicChosen, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: chosenToken }).toString(),
    })
    expect(introspect.json().active).toBe(true)
    const foreign = await call({
      method: 'POST',
      url: '/api/oauth/introspect',
      payload: { token: chosenToken, client_id: generated.clientId, client_secret: generated.clientSecret },
    })
    expect(foreign.json().active).toBe(false)
    const refusedRevoke = await call({
      method: 'POST',
      url: '/api/oauth/revoke',
      payload: { token: chosenToken, client_id: generated.clientId, client_secret: generated.clientSecret },
    })
    expect(refusedRevoke.statusCode).toBe(400)
    const revoke = await call({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: { authorization: basicChosen, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: chosenToken, token_type_hint: 'access_token' }).toString(),
    })
    expect(revoke.statusCode, revoke.body).toBe(200)
    expect((await getEmployees(bearer(chosenToken))).statusCode).toBe(401)

    // An expired token.
    cloud.fixedNow = nowMicros() - 2 * HOUR
    const old = await token({ grant_type: 'client_credentials' }, { authorization: basicChosen })
    cloud.fixedNow = undefined
    expect((await getEmployees(bearer(old.json().access_token))).statusCode).toBe(401)

    // Rotation: the old secret keeps working through its grace, the new one works at once.
    const rotated = await cloud.services.oauthApps.rotateSecret(tenantId, chosen.id, TEST_ACTOR, 3600)
    secrets.add(rotated.clientSecret)
    const basicRotated = basic(chosen.clientId, rotated.clientSecret)
    secrets.add(basicRotated.slice('Basic '.length))
    expect(
      (await token({ grant_type: 'client_credentials' }, { authorization: basicChosen })).statusCode,
    ).toBe(200)
    expect(
      (await token({ grant_type: 'client_credentials' }, { authorization: basicRotated })).statusCode,
    ).toBe(200)
    // A revoked app: its secrets and tokens are refused.
    await cloud.services.oauthApps.revoke(tenantId, generated.id, TEST_ACTOR)
    expect((await getEmployees(bearer(appToken))).statusCode).toBe(401)
    expect(
      (
        await token({
          grant_type: 'client_credentials',
          client_id: generated.clientId,
          client_secret: generated.clientSecret,
        })
      ).statusCode,
    ).toBe(401)
    expect(secrets.values.size).toBeGreaterThan(30)
  })

  it('forces an internal error with a live key in the Authorization header: logged, and redacted', async () => {
    const tenantId = tenantIds[0] as string
    const { key, id } = await cloud.services.apiKeys.create(
      tenantId,
      { scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    secrets.add(key)
    const db = cloud.database.db
    // The key still authenticates; the route's own query then fails, as a broken database would.
    await sql`alter table employees rename to employees_away`.execute(db)
    let res: LightMyRequestResponse
    try {
      res = await getEmployees(bearer(key))
    } finally {
      await sql`alter table employees_away rename to employees`.execute(db)
    }
    expect(res.statusCode, res.body).toBe(500)
    expect(res.body).not.toContain('employees')
    const requestId = res.headers['x-request-id']
    const failure = log.lines().find((line) => line.requestId === requestId && line.level === 50)
    // The failure is logged with what support needs: request, tenant, credential, the error.
    expect(failure).toMatchObject({ tenantId, credentialId: id, msg: 'request failed' })
    expect(JSON.stringify(failure)).toMatch(/no such table/)
  })

  it('runs the CLI credential commands; stdout shows each secret once, stderr never', async () => {
    // stdout is judged one command at a time, stderr over them all.
    let stderr = ''
    const cli = async (...argv: string[]) => {
      const result = await captureCli(runCli, [...argv, '--json'], {
        env: { HAJRI_DATABASE_URL: cloud.databaseUrl },
        cwd: process.cwd(),
      })
      stderr += result.stderr
      return { code: result.code, output: result.stdout, json: () => JSON.parse(result.stdout) }
    }
    const tenant = await cli(
      'tenant',
      'create',
      '--name',
      'CLI tenant',
      '--admin-email',
      'cli-logs@example.test',
    )
    expect(tenant.code).toBe(0)
    secrets.add(tenant.json().adminPassword)
    const tenantId: string = tenant.json().tenantId
    tenantIds.push(tenantId)
    const key = await cli(
      'api-key',
      'create',
      '--tenant',
      tenantId,
      '--scopes',
      'employees:read',
      '--rate-limit',
      '5',
    )
    expect(key.code).toBe(0)
    secrets.add(key.json().key)
    const oauth = await cli(
      'oauth-app',
      'create',
      '--tenant',
      tenantId,
      '--name',
      'cli app',
      '--scopes',
      'employees:read',
      '--client-id',
      'cli client:1+%',
    )
    expect(oauth.code).toBe(0)
    secrets.add(oauth.json().clientSecret)
    const rotated = await cli(
      'oauth-app',
      'rotate-secret',
      '--tenant',
      tenantId,
      oauth.json().id,
      '--grace',
      '1h',
    )
    expect(rotated.code).toBe(0)
    secrets.add(rotated.json().clientSecret)
    // The CLI's secrets work against the app, which logs the requests.
    expect((await getEmployees(bearer(key.json().key))).statusCode).toBe(200)
    const cliToken = await token({
      grant_type: 'client_credentials',
      client_id: 'cli client:1+%',
      client_secret: rotated.json().clientSecret,
    })
    expect(cliToken.statusCode, cliToken.body).toBe(200)

    // Listing, revoking and failing print no secret at all.
    const quiet = [
      await cli('api-key', 'list', '--tenant', tenantId),
      await cli('oauth-app', 'list', '--tenant', tenantId),
      await cli('api-key', 'revoke', '--tenant', tenantId, key.json().id),
      await cli('oauth-app', 'revoke', '--tenant', tenantId, oauth.json().id),
      await cli('audit', 'list', '--tenant', tenantId),
      // Fails: the client id is taken.
      await cli(
        'oauth-app',
        'create',
        '--tenant',
        tenantId,
        '--name',
        'again',
        '--scopes',
        'employees:read',
        '--client-id',
        'cli client:1+%',
      ),
      await cli('oauth-app', 'rotate-secret', '--tenant', tenantId, 'app_unknown'),
    ]
    expect(quiet.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 1, 1])
    for (const result of quiet) expect(secrets.foundIn(result.output)).toEqual([])
    expect((await getEmployees(bearer(key.json().key))).statusCode).toBe(401)
    expect(stderr).toContain('hajri-cloud: ')
    expect(secrets.foundIn(stderr)).toEqual([])
  })

  it('the whole log names every request and tenant, and holds none of the secrets', () => {
    const lines = log.lines()
    // A log that caught nothing would pass any grep: it must hold every request of the run (its
    // completion line, and whatever was logged on the way).
    expect(lines.length).toBeGreaterThanOrEqual(responses.length)
    const logged = new Set(lines.map((line) => line.requestId))
    const missing = responses.map((r) => r.headers['x-request-id']).filter((id) => !logged.has(id))
    expect(missing).toEqual([])
    expect(responses.length).toBeGreaterThan(50)
    expect(log.text).toContain(tenantIds[0])
    expect(secrets.values.size).toBeGreaterThan(40)
    expect(secrets.foundIn(log.text)).toEqual([])
  })
})

describe('the redaction itself (loggerOptions)', () => {
  it('censors the Authorization and Cookie headers and secret-named fields, whatever carries them', () => {
    const out = new MemoryLog()
    const logger = pino(loggerOptions('trace'), out)
    const key = 'hjk_0123456789abcdefghijABCDEFGHIJk1m2n3'
    // Headers under any other name than req (which is serialized without them) are redacted too.
    logger.info(
      { request: { method: 'GET', headers: { authorization: `Bearer ${key}`, cookie: `s=${key}` } } },
      'headers',
    )
    logger.error(
      {
        err: Object.assign(new Error('failed'), {
          token: key,
          key,
          secret: key,
          clientSecret: key,
          client_secret: key,
          access_token: key,
          password: key,
          adminPassword: key,
        }),
      },
      'error',
    )
    logger.info({ body: { client_secret: key, access_token: key, token: key } }, 'body')
    expect(out.text).not.toContain(key)
    const [headers, error, body] = out.lines() as [
      { request: { headers: Record<string, string> } },
      { err: Record<string, string> },
      { body: Record<string, string> },
    ]
    expect(headers.request.headers).toEqual({ authorization: '[redacted]', cookie: '[redacted]' })
    expect(error.err.message).toBe('failed')
    for (const field of [
      'token',
      'key',
      'secret',
      'clientSecret',
      'client_secret',
      'access_token',
      'password',
    ]) {
      expect(error.err[field], field).toBe('[redacted]')
    }
    expect(body.body).toEqual({
      client_secret: '[redacted]',
      access_token: '[redacted]',
      token: '[redacted]',
    })
    expect(REDACT_PATHS).toContain('req.headers.authorization')
  })
})

describe('a credential sent in the query string', () => {
  const cloud = new TestCloud('sqlite')
  const log = new MemoryLog()
  let app: FastifyInstance

  beforeAll(async () => {
    await cloud.start()
    app = await buildApp({
      config: appConfig(1_000_000),
      database: cloud.database,
      logger: pino(loggerOptions('trace'), log),
      closeDatabase: false,
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await cloud.stop()
  })

  it('is refused and kept out of the logs (clients do put keys in URLs: RFC 6750 §2.3)', async () => {
    const tenantId = await cloud.createTenant()
    const key = await cloud.createApiKey(tenantId, ['employees:read'])
    const oauth = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'query', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const viaQuery = await app.inject({ method: 'GET', url: `${EMPLOYEES}?access_token=${key}` })
    expect(viaQuery.statusCode).toBe(401)
    const tokenViaQuery = await app.inject({
      method: 'POST',
      url: `/api/oauth/token?client_id=${oauth.clientId}&client_secret=${oauth.clientSecret}`,
      payload: { grant_type: 'client_credentials' },
    })
    expect(tokenViaQuery.statusCode).toBe(401)
    expect(log.text).toContain(viaQuery.headers['x-request-id'])
    expect(log.text).not.toContain(key)
    expect(log.text).not.toContain(oauth.clientSecret)
  })
})
