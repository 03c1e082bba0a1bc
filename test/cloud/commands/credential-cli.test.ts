import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { hashSecret } from '../../../cloud/auth/secret-format.js'
import { runCli } from '../../../cloud/cli.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { AUDIT_ACTIONS } from '../../../shared/audit.js'
import type { ApiKeySummary, OAuthAppSummary } from '../../../shared/credentials.js'
import { nowMicros, parseTimestamp } from '../../../shared/time.js'
import { type CliResult, captureCli } from '../../support/cli-capture.js'
import { bearer, createTestDatabaseUrl, type DatabaseKind } from '../../support/cloud-harness.js'
import { postgresAvailability } from '../../support/services.js'

const HOUR = 3_600_000_000
const EMPLOYEES = '/api/public/v1/employees'
const UNKNOWN_KEY = 'key_00000000000000000000000000'
const UNKNOWN_APP = 'app_00000000000000000000000000'

/** The audit actor the CLI records: the operating-system user who ran it. */
const CLI_ACTOR = (() => {
  try {
    return `cli:${userInfo().username}`
  } catch {
    return 'cli:unknown'
  }
})()

function cli(env: NodeJS.ProcessEnv, cwd: string, argv: string[]): Promise<CliResult> {
  return captureCli(runCli, argv, { env, cwd })
}

/** A success: exit 0 and nothing on stderr. */
function expectSuccess(result: CliResult): CliResult {
  expect(result.code, result.stdout + result.stderr).toBe(0)
  expect(result.stderr).toBe('')
  return result
}

/** A failure as --json reports it: the exit status, and `{error: {code, message}}` on stdout. */
function expectFailure(result: CliResult, status: number, code: string): string {
  expect(result.code, result.stdout + result.stderr).toBe(status)
  const body = result.json<{ error: { code: string; message: string } }>()
  expect(Object.keys(body)).toEqual(['error'])
  expect(body.error.code).toBe(code)
  expect(result.stderr).toMatch(/^hajri-cloud: /)
  if (status === 2) expect(result.stderr).toContain('Usage:')
  return body.error.message
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 has client_secret_basic encode each half. */
const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2)

const postgres = await postgresAvailability()

for (const kind of ['sqlite', 'postgres'] as DatabaseKind[]) {
  const skipReason = kind === 'postgres' ? postgres.skipReason : undefined

  describe.skipIf(skipReason !== undefined)(
    `hajri-cloud credential commands [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      let workDir: string
      let dropDatabase: () => Promise<void>
      let env: NodeJS.ProcessEnv
      let database: DatabaseHandle
      let app: FastifyInstance
      let tenantId: string
      let otherTenantId: string
      /** Every secret the CLI printed, to make sure no listing ever prints one again. */
      const secrets: string[] = []

      const run = (...argv: string[]) => cli(env, workDir, argv)

      beforeAll(async () => {
        workDir = await mkdtemp(join(tmpdir(), 'hajri-credential-cli-'))
        const target = await createTestDatabaseUrl(kind)
        dropDatabase = target.drop
        env = { HAJRI_DATABASE_URL: target.url }
        // The API, in-process, over the very database the CLI writes to.
        database = openDatabase(target.url, { poolSize: 2 })
        await migrateToLatest(database.db)
        app = await buildApp({
          config: {
            bodyLimitBytes: 1024 * 1024,
            trustProxy: false,
            logLevel: 'silent',
            oauthRateLimitPerIp: 1_000_000,
            oauthRateLimitPerClient: 1_000_000,
          },
          database,
          logger: false,
          closeDatabase: false,
        })
        await app.ready()
        tenantId = await createTenant()
        otherTenantId = await createTenant()
      })
      afterAll(async () => {
        await app?.close()
        await database?.close()
        await dropDatabase?.()
        await rm(workDir, { recursive: true, force: true })
      })

      async function createTenant(): Promise<string> {
        const email = `owner-${Math.random().toString(36).slice(2)}@example.test`
        const result = expectSuccess(
          await run('tenant', 'create', '--name', 'Acme Pune', '--admin-email', email, '--json'),
        )
        return result.json<{ tenantId: string }>().tenantId
      }

      const getEmployees = (token: string) =>
        app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(token) })

      /** RFC 6749 §4.4: a token for the client, authenticated in the body or with HTTP Basic. */
      const requestToken = (
        clientId: string,
        clientSecret: string,
        method: 'post' | 'basic' = 'post',
        remoteAddress = '127.0.0.1',
      ) =>
        app.inject({
          method: 'POST',
          url: '/api/oauth/token',
          remoteAddress,
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            ...(method === 'basic'
              ? {
                  authorization: `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`,
                }
              : {}),
          },
          payload: new URLSearchParams({
            grant_type: 'client_credentials',
            ...(method === 'post' ? { client_id: clientId, client_secret: clientSecret } : {}),
          }).toString(),
        })

      const expectTokenRefused = async (clientId: string, clientSecret: string) => {
        for (const method of ['post', 'basic'] as const) {
          const res = await requestToken(clientId, clientSecret, method)
          expect(res.statusCode, `${method}: ${res.body}`).toBe(401)
          expect(res.json()).toMatchObject({ error: 'invalid_client' })
        }
      }

      const expectTokenIssued = async (clientId: string, clientSecret: string): Promise<string> => {
        let token = ''
        for (const method of ['post', 'basic'] as const) {
          const res = await requestToken(clientId, clientSecret, method)
          expect(res.statusCode, `${method}: ${res.body}`).toBe(200)
          token = res.json().access_token
          secrets.push(token)
        }
        return token
      }

      async function createKey(tenant = tenantId, ...extra: string[]) {
        const result = expectSuccess(
          await run(
            'api-key',
            'create',
            '--tenant',
            tenant,
            '--scopes',
            'employees:read',
            ...extra,
            '--json',
          ),
        )
        const created = result.json<{ id: string; key: string }>()
        secrets.push(created.key)
        return created
      }

      async function createApp(tenant = tenantId, ...extra: string[]) {
        const result = expectSuccess(
          await run(
            'oauth-app',
            'create',
            '--tenant',
            tenant,
            '--name',
            'gate agent',
            '--scopes',
            'employees:read,attendance:write',
            ...extra,
            '--json',
          ),
        )
        const created = result.json<{ id: string; clientId: string; clientSecret: string }>()
        secrets.push(created.clientSecret)
        return created
      }

      async function listApps(tenant = tenantId): Promise<OAuthAppSummary[]> {
        const result = expectSuccess(await run('oauth-app', 'list', '--tenant', tenant, '--json'))
        for (const secret of secrets) expect(result.stdout).not.toContain(secret)
        return result.json<OAuthAppSummary[]>()
      }

      const audit = async (tenant: string, ...extra: string[]) => {
        const result = expectSuccess(await run('audit', 'list', '--tenant', tenant, ...extra, '--json'))
        return result.json<{ action: string; actor: string; ip: string | null; target: { id: string } }[]>()
      }

      describe('api-key', () => {
        it('create --json prints the key once with its settings, and the API accepts it', async () => {
          const result = expectSuccess(
            await run('api-key', 'create', '--tenant', tenantId, '--scopes', 'employees:read', '--json'),
          )
          const created = result.json<{ id: string; key: string }>()
          secrets.push(created.key)
          expect(created).toEqual({
            id: expect.stringMatching(/^key_[0-9A-HJKMNP-TV-Z]{26}$/),
            key: expect.stringMatching(/^hjk_[0-9A-Za-z]{36}$/),
            name: 'api key',
            scopes: ['employees:read'],
            rateLimitPerMinute: 600,
            expiresAt: expect.any(String),
          })
          const res = await getEmployees(created.key)
          expect(res.statusCode, res.body).toBe(200)
        })

        it('list shows each key by its prefix only, with status and last use, as JSON and for a person', async () => {
          const tenant = await createTenant()
          const empty = expectSuccess(await run('api-key', 'list', '--tenant', tenant))
          expect(empty.stdout).toBe('no API keys\n')
          expect(expectSuccess(await run('api-key', 'list', '--tenant', tenant, '--json')).json()).toEqual([])

          const used = await createKey(tenant, '--name', 'payroll sync')
          const unused = await createKey(tenant, '--name', 'spare')
          expect((await getEmployees(used.key)).statusCode).toBe(200)

          const json = expectSuccess(await run('api-key', 'list', '--tenant', tenant, '--json'))
          const keys = json.json<ApiKeySummary[]>()
          expect(keys.map((k) => [k.id, k.name, k.prefix, k.status])).toEqual([
            [used.id, 'payroll sync', used.key.slice(0, 10), 'active'],
            [unused.id, 'spare', unused.key.slice(0, 10), 'active'],
          ])
          expect(keys[0]?.lastUsedAt).toEqual(expect.any(String))
          expect(keys[1]?.lastUsedAt).toBeNull()

          const human = expectSuccess(await run('api-key', 'list', '--tenant', tenant))
          const lines = human.stdout.trimEnd().split('\n')
          expect(lines).toHaveLength(2)
          expect(lines[0]).toContain(used.id)
          expect(lines[0]).toContain(used.key.slice(0, 10))
          expect(lines[0]).toContain('payroll sync (employees:read)')
          expect(lines[1]).toContain('last used never')
          for (const output of [json.stdout, human.stdout]) {
            for (const key of [used.key, unused.key]) {
              expect(output).not.toContain(key)
              expect(output).not.toContain(key.slice(10))
              expect(output).not.toContain(hashSecret(key))
            }
          }
        })

        it('revoke refuses the key on the very next request, and is idempotent', async () => {
          const created = await createKey()
          expect((await getEmployees(created.key)).statusCode).toBe(200)
          const result = expectSuccess(
            await run('api-key', 'revoke', '--tenant', tenantId, created.id, '--json'),
          )
          expect(result.json()).toMatchObject({
            id: created.id,
            status: 'revoked',
            revokedAt: expect.any(String),
          })
          expect(result.stdout).not.toContain(created.key)
          const next = await getEmployees(created.key)
          expect(next.statusCode).toBe(401)
          expect(next.json()).toMatchObject({ code: 'invalid_credential' })

          const again = expectSuccess(await run('api-key', 'revoke', '--tenant', tenantId, created.id))
          expect(again.stdout).toBe(`API key ${created.id} revoked: it is refused from the next request on\n`)
          const listed = expectSuccess(await run('api-key', 'list', '--tenant', tenantId, '--json'))
            .json<ApiKeySummary[]>()
            .find((k) => k.id === created.id)
          expect(listed?.status).toBe('revoked')
          expect(
            (await audit(tenantId, '--target', created.id)).map((e) => [e.action, e.actor, e.ip]),
          ).toEqual([
            ['api_key.revoked', CLI_ACTOR, null],
            ['api_key.created', CLI_ACTOR, null],
          ])
        })

        it("revoke of an unknown key, or another tenant's, fails with api_key_not_found (exit 1)", async () => {
          const theirs = await createKey(otherTenantId)
          for (const id of [UNKNOWN_KEY, theirs.id]) {
            const message = expectFailure(
              await run('api-key', 'revoke', '--tenant', tenantId, id, '--json'),
              1,
              'api_key_not_found',
            )
            expect(message).toContain(id)
          }
          // Without --json the failure goes to stderr only.
          const human = await run('api-key', 'revoke', '--tenant', tenantId, UNKNOWN_KEY)
          expect(human.code).toBe(1)
          expect(human.stdout).toBe('')
          expect(human.stderr).toBe(`hajri-cloud: No API key ${UNKNOWN_KEY}.\n`)
          expect((await getEmployees(theirs.key)).statusCode).toBe(200)
        })

        it('is a usage error (exit 2) without --tenant or an id, with an extra argument, or a bad duration', async () => {
          expectFailure(await run('api-key', 'list', '--json'), 2, 'usage')
          expectFailure(await run('api-key', 'revoke', UNKNOWN_KEY, '--json'), 2, 'usage')
          expect(
            expectFailure(await run('api-key', 'revoke', '--tenant', tenantId, '--json'), 2, 'usage'),
          ).toContain('id of the API key')
          expect(
            expectFailure(
              await run('api-key', 'revoke', '--tenant', tenantId, UNKNOWN_KEY, 'extra', '--json'),
              2,
              'usage',
            ),
          ).toContain('unexpected argument "extra"')
          expectFailure(await run('api-key', 'list', '--tenant', tenantId, 'extra', '--json'), 2, 'usage')
          expectFailure(await run('api-key', 'delete', '--tenant', tenantId, '--json'), 2, 'usage')
          for (const ttl of ['soon', '1.5d', '-1d']) {
            const message = expectFailure(
              await run(
                'api-key',
                'create',
                '--tenant',
                tenantId,
                '--scopes',
                'employees:read',
                '--expires-in',
                ttl,
                '--json',
              ),
              2,
              'usage',
            )
            expect(message, ttl).toContain('--expires-in')
          }
        })

        it('refuses an unknown scope or an expiry beyond 2 years (exit 1, validation_failed)', async () => {
          expect(
            expectFailure(
              await run(
                'api-key',
                'create',
                '--tenant',
                tenantId,
                '--scopes',
                'employees:read,payroll:write',
                '--json',
              ),
              1,
              'validation_failed',
            ),
          ).toContain('payroll:write')
          expect(
            expectFailure(
              await run(
                'api-key',
                'create',
                '--tenant',
                tenantId,
                '--scopes',
                'employees:read',
                '--expires-in',
                '731d',
                '--json',
              ),
              1,
              'validation_failed',
            ),
          ).toContain('expiry')
        })
      })

      describe('oauth-app', () => {
        it('create --json prints exactly id, client id and secret; the secret gets tokens that the API accepts', async () => {
          const result = expectSuccess(
            await run(
              'oauth-app',
              'create',
              '--tenant',
              tenantId,
              '--name',
              'HR backend',
              '--scopes',
              'employees:read,attendance:read',
              '--rate-limit',
              '30',
              '--json',
            ),
          )
          const created = result.json<{ id: string; clientId: string; clientSecret: string }>()
          secrets.push(created.clientSecret)
          expect(created).toEqual({
            id: expect.stringMatching(/^app_[0-9A-HJKMNP-TV-Z]{26}$/),
            clientId: expect.stringMatching(/^hjc_[0-9A-Za-z]{24}$/),
            clientSecret: expect.stringMatching(/^hjs_[0-9A-Za-z]{46}$/),
          })
          const token = await expectTokenIssued(created.clientId, created.clientSecret)
          expect((await getEmployees(token)).statusCode).toBe(200)
          expect((await listApps()).find((a) => a.id === created.id)).toMatchObject({
            name: 'HR backend',
            scopes: ['employees:read', 'attendance:read'],
            rateLimitPerMinute: 30,
            status: 'active',
          })
        })

        it('create prints the secret once for a person, saying so', async () => {
          const result = expectSuccess(
            await run(
              'oauth-app',
              'create',
              '--tenant',
              tenantId,
              '--name',
              'site',
              '--scopes',
              'attendance:write',
            ),
          )
          const m =
            /^OAuth app (app_\w+)\nclient id: +(hjc_\w+)\nclient secret: (hjs_\w+)\n\(the secret is shown once/.exec(
              result.stdout,
            )
          expect(m, result.stdout).not.toBeNull()
          const [, , clientId, clientSecret] = m as RegExpExecArray
          secrets.push(clientSecret as string)
          await expectTokenIssued(clientId as string, clientSecret as string)
        })

        it('takes a chosen --client-id, even one that needs URL-encoding, and refuses it twice (client_id_taken)', async () => {
          const clientId = `pune plant:1+gate%${Math.random().toString(36).slice(2, 8)}`
          const created = await createApp(tenantId, '--client-id', clientId)
          expect(created.clientId).toBe(clientId)
          await expectTokenIssued(clientId, created.clientSecret)

          const before = (await listApps()).length
          for (const tenant of [tenantId, otherTenantId]) {
            const message = expectFailure(
              await run(
                'oauth-app',
                'create',
                '--tenant',
                tenant,
                '--name',
                'copy',
                '--scopes',
                'attendance:write',
                '--client-id',
                clientId,
                '--json',
              ),
              1,
              'client_id_taken',
            )
            expect(message).toContain(clientId)
          }
          expect(await listApps()).toHaveLength(before)
          await expectTokenIssued(clientId, created.clientSecret)
        })

        it('refuses an unknown scope, a bad rate limit or client id (exit 1), and missing options (exit 2)', async () => {
          const create = (...argv: string[]) =>
            run('oauth-app', 'create', '--tenant', tenantId, '--json', ...argv)
          expect(
            expectFailure(
              await create('--name', 'x', '--scopes', 'attendance:write,admin'),
              1,
              'validation_failed',
            ),
          ).toContain('"admin"')
          expectFailure(
            await create('--name', 'x', '--scopes', 'attendance:write', '--rate-limit', '0'),
            1,
            'validation_failed',
          )
          expect(
            expectFailure(
              await create('--name', 'x', '--scopes', 'attendance:write', '--client-id', 'short'),
              1,
              'validation_failed',
            ),
          ).toContain('client id')
          expectFailure(
            await create('--name', 'x', '--scopes', 'attendance:write', '--rate-limit', 'many'),
            2,
            'usage',
          )
          expectFailure(await create('--scopes', 'attendance:write'), 2, 'usage')
          expectFailure(await create('--name', 'x'), 2, 'usage')
          expectFailure(
            await run('oauth-app', 'create', '--name', 'x', '--scopes', 'attendance:write', '--json'),
            2,
            'usage',
          )
          expectFailure(await run('oauth-app', 'list', '--json'), 2, 'usage')
        })

        it('list shows apps with secret prefixes only, as JSON and for a person', async () => {
          const tenant = await createTenant()
          expect(expectSuccess(await run('oauth-app', 'list', '--tenant', tenant)).stdout).toBe(
            'no OAuth apps\n',
          )
          const created = await createApp(tenant)
          const [listed] = await listApps(tenant)
          expect(listed).toMatchObject({ id: created.id, clientId: created.clientId, status: 'active' })
          expect(listed?.secrets).toEqual([
            {
              id: expect.stringMatching(/^sec_/),
              prefix: created.clientSecret.slice(0, 10),
              createdAt: expect.any(String),
              expiresAt: null,
            },
          ])
          const human = expectSuccess(await run('oauth-app', 'list', '--tenant', tenant))
          expect(human.stdout).toContain(`client id ${created.clientId}`)
          expect(human.stdout).toContain(`secrets: ${created.clientSecret.slice(0, 10)}… current`)
          for (const secret of secrets) expect(human.stdout).not.toContain(secret)
          expect(human.stdout).not.toContain(hashSecret(created.clientSecret))
        })

        it('rotate-secret issues a new secret; the old one keeps working for 24 h by default', async () => {
          const created = await createApp()
          const before = nowMicros()
          const result = expectSuccess(
            await run('oauth-app', 'rotate-secret', '--tenant', tenantId, created.id, '--json'),
          )
          const after = nowMicros()
          const rotated = result.json<{ clientSecret: string; previousSecretsExpireAt: string }>()
          secrets.push(rotated.clientSecret)
          expect(rotated).toEqual({
            id: created.id,
            clientId: created.clientId,
            clientSecret: expect.stringMatching(/^hjs_[0-9A-Za-z]{46}$/),
            previousSecretsExpireAt: expect.any(String),
          })
          const until = parseTimestamp(rotated.previousSecretsExpireAt) as number
          expect(until).toBeGreaterThanOrEqual(before + 24 * HOUR)
          expect(until).toBeLessThanOrEqual(after + 24 * HOUR)

          await expectTokenIssued(created.clientId, created.clientSecret)
          await expectTokenIssued(created.clientId, rotated.clientSecret)
          const listed = (await listApps()).find((a) => a.id === created.id)
          expect(listed?.secrets.map((s) => [s.prefix, s.expiresAt])).toEqual([
            [created.clientSecret.slice(0, 10), rotated.previousSecretsExpireAt],
            [rotated.clientSecret.slice(0, 10), null],
          ])
        })

        it('rotate-secret --grace 0 cuts the old secret off at once; --grace 2h sets its end; a person is told when', async () => {
          const created = await createApp()
          const now = expectSuccess(
            await run(
              'oauth-app',
              'rotate-secret',
              '--tenant',
              tenantId,
              created.id,
              '--grace',
              '0',
              '--json',
            ),
          ).json<{ clientSecret: string }>()
          secrets.push(now.clientSecret)
          await expectTokenRefused(created.clientId, created.clientSecret)
          await expectTokenIssued(created.clientId, now.clientSecret)

          const before = nowMicros()
          const human = expectSuccess(
            await run('oauth-app', 'rotate-secret', '--tenant', tenantId, created.id, '--grace', '2h'),
          )
          const after = nowMicros()
          const m =
            /^new client secret: (hjs_\w+)\nthe previous secret works until (\S+)\n\(the secret is shown once/.exec(
              human.stdout,
            )
          expect(m, human.stdout).not.toBeNull()
          const [, secret, until] = m as RegExpExecArray
          secrets.push(secret as string)
          const end = parseTimestamp(until as string) as number
          expect(end).toBeGreaterThanOrEqual(before + 2 * HOUR)
          expect(end).toBeLessThanOrEqual(after + 2 * HOUR)
          await expectTokenIssued(created.clientId, now.clientSecret)
          await expectTokenIssued(created.clientId, secret as string)
        })

        it('rotate-secret refuses a bad --grace (exit 2) or one over 30 days (exit 1), and rotates nothing', async () => {
          const created = await createApp()
          for (const grace of ['soon', '1.5h', '-1h', '']) {
            const message = expectFailure(
              await run(
                'oauth-app',
                'rotate-secret',
                '--tenant',
                tenantId,
                created.id,
                '--grace',
                grace,
                '--json',
              ),
              2,
              'usage',
            )
            expect(message, grace).toContain('--grace')
          }
          expect(
            expectFailure(
              await run(
                'oauth-app',
                'rotate-secret',
                '--tenant',
                tenantId,
                created.id,
                '--grace',
                '31d',
                '--json',
              ),
              1,
              'validation_failed',
            ),
          ).toContain('grace')
          expect((await listApps()).find((a) => a.id === created.id)?.secrets).toHaveLength(1)
          await expectTokenIssued(created.clientId, created.clientSecret)
        })

        it("rotate-secret and revoke answer oauth_app_not_found (exit 1) for an unknown or another tenant's app", async () => {
          const theirs = await createApp(otherTenantId)
          for (const id of [UNKNOWN_APP, theirs.id]) {
            expectFailure(
              await run('oauth-app', 'rotate-secret', '--tenant', tenantId, id, '--json'),
              1,
              'oauth_app_not_found',
            )
            expectFailure(
              await run('oauth-app', 'revoke', '--tenant', tenantId, id, '--json'),
              1,
              'oauth_app_not_found',
            )
          }
          await expectTokenIssued(theirs.clientId, theirs.clientSecret)
          expectFailure(await run('oauth-app', 'rotate-secret', '--tenant', tenantId, '--json'), 2, 'usage')
          expectFailure(await run('oauth-app', 'revoke', '--tenant', tenantId, '--json'), 2, 'usage')
          expectFailure(
            await run('oauth-app', 'revoke', '--tenant', tenantId, theirs.id, UNKNOWN_APP, '--json'),
            2,
            'usage',
          )
        })

        it('revoke refuses the app and every token issued to it from the very next request', async () => {
          const created = await createApp()
          const token = await expectTokenIssued(created.clientId, created.clientSecret)
          expect((await getEmployees(token)).statusCode).toBe(200)

          const result = expectSuccess(
            await run('oauth-app', 'revoke', '--tenant', tenantId, created.id, '--json'),
          )
          expect(result.json()).toMatchObject({
            id: created.id,
            status: 'revoked',
            revokedAt: expect.any(String),
            secrets: [],
          })
          await expectTokenRefused(created.clientId, created.clientSecret)
          const next = await getEmployees(token)
          expect(next.statusCode).toBe(401)
          expect(next.json()).toMatchObject({ code: 'invalid_credential' })

          const again = expectSuccess(await run('oauth-app', 'revoke', '--tenant', tenantId, created.id))
          expect(again.stdout).toContain(`OAuth app ${created.id} revoked`)
          expectFailure(
            await run('oauth-app', 'rotate-secret', '--tenant', tenantId, created.id, '--json'),
            1,
            'oauth_app_not_found',
          )
          expect((await listApps()).find((a) => a.id === created.id)).toMatchObject({
            status: 'revoked',
            secrets: [],
          })
          expect(
            (await audit(tenantId, '--target', created.id, '--action', 'oauth_app.revoked')).length,
          ).toBe(1)
        })
      })

      describe('audit list', () => {
        let tenant: string
        let keyId: string
        let appId: string

        beforeAll(async () => {
          tenant = await createTenant()
          keyId = (await createKey(tenant)).id
          expectSuccess(await run('api-key', 'revoke', '--tenant', tenant, keyId))
          const created = await createApp(tenant)
          appId = created.id
          const rotated = expectSuccess(
            await run('oauth-app', 'rotate-secret', '--tenant', tenant, appId, '--json'),
          ).json<{ clientSecret: string }>()
          secrets.push(rotated.clientSecret)
          const res = await requestToken(created.clientId, rotated.clientSecret, 'post', '203.0.113.9')
          expect(res.statusCode, res.body).toBe(200)
          secrets.push(res.json().access_token)
        })

        it('lists every change newest first: CLI actions by cli:<user> without an IP, tokens with the client IP', async () => {
          const entries = await audit(tenant)
          expect(entries.map((e) => [e.action, e.actor, e.ip])).toEqual([
            ['oauth_token.issued', `oauth_app:${appId}`, '203.0.113.9'],
            ['oauth_app.secret_rotated', CLI_ACTOR, null],
            ['oauth_app.created', CLI_ACTOR, null],
            ['api_key.revoked', CLI_ACTOR, null],
            ['api_key.created', CLI_ACTOR, null],
          ])
        })

        it('filters by --action and --target, and keeps the newest --limit entries', async () => {
          expect((await audit(tenant, '--action', 'api_key.revoked')).map((e) => e.target.id)).toEqual([
            keyId,
          ])
          expect((await audit(tenant, '--target', appId)).map((e) => e.action)).toEqual([
            'oauth_app.secret_rotated',
            'oauth_app.created',
          ])
          expect((await audit(tenant, '--limit', '2')).map((e) => e.action)).toEqual([
            'oauth_token.issued',
            'oauth_app.secret_rotated',
          ])
          expect(await audit(tenant, '--action', 'oauth_token.revoked')).toEqual([])
        })

        it('prints one line per entry for a person, and never a secret', async () => {
          const human = expectSuccess(await run('audit', 'list', '--tenant', tenant))
          const lines = human.stdout.trimEnd().split('\n')
          expect(lines).toHaveLength(5)
          expect(lines[0]).toMatch(
            new RegExp(
              `oauth_token\\.issued +oauth_token tok_\\w+  by oauth_app:${appId} from 203\\.0\\.113\\.9$`,
            ),
          )
          expect(lines[4]).toMatch(new RegExp(`api_key\\.created +api_key ${keyId}  by ${CLI_ACTOR}$`))
          const json = expectSuccess(await run('audit', 'list', '--tenant', tenant, '--json'))
          for (const secret of secrets) {
            expect(human.stdout).not.toContain(secret)
            expect(json.stdout).not.toContain(secret)
          }
          const fresh = await createTenant()
          expect(expectSuccess(await run('audit', 'list', '--tenant', fresh)).stdout).toBe(
            'no audit entries\n',
          )
          expect(await audit(fresh)).toEqual([])
        })

        it('shows a tenant only its own entries', async () => {
          const theirs = await audit(otherTenantId)
          expect(theirs.length).toBeGreaterThan(0)
          const ids = theirs.map((e) => e.target.id)
          expect(ids).not.toContain(keyId)
          expect(ids).not.toContain(appId)
          expect(await audit(otherTenantId, '--target', appId)).toEqual([])
        })

        it('is a usage error (exit 2) without --tenant, with an unknown action, a bad limit or an extra argument', async () => {
          expectFailure(await run('audit', 'list', '--json'), 2, 'usage')
          const message = expectFailure(
            await run('audit', 'list', '--tenant', tenant, '--action', 'api_key.deleted', '--json'),
            2,
            'usage',
          )
          for (const action of AUDIT_ACTIONS) expect(message).toContain(action)
          for (const limit of ['0', '201', 'ten']) {
            expectFailure(
              await run('audit', 'list', '--tenant', tenant, '--limit', limit, '--json'),
              2,
              'usage',
            )
          }
          expectFailure(await run('audit', 'list', '--tenant', tenant, 'extra', '--json'), 2, 'usage')
          expectFailure(await run('audit', 'show', '--tenant', tenant, '--json'), 2, 'usage')
        })
      })
    },
  )
}
