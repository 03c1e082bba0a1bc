import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { runCli } from '../../../cloud/cli.js'
import { nowMicros, parseTimestamp } from '../../../shared/time.js'
import type { WebhookDelivery, WebhookDeliveryDetail, WebhookEndpoint } from '../../../shared/webhooks.js'
import { type CliResult, captureCli } from '../../support/cli-capture.js'
import { bearer, type DatabaseKind, TEST_SECRET_KEY, TestCloud } from '../../support/cloud-harness.js'
import { postgresAvailability } from '../../support/services.js'
import { WebhookReceiver } from '../../support/webhook-receiver.js'

const HOUR = 3_600_000_000
const CONSOLE_WEBHOOKS = '/api/console/v1/webhooks'
const UNKNOWN_ENDPOINT = 'whk_00000000000000000000000000'
const UNKNOWN_DELIVERY = 'dlv_00000000000000000000000000'

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

interface AuditEntry {
  action: string
  actor: string
  ip: string | null
  target: { type: string; id: string }
}

type CreatedEndpoint = WebhookEndpoint & { secret: string }

const postgres = await postgresAvailability()

for (const kind of ['sqlite', 'postgres'] as DatabaseKind[]) {
  const skipReason = kind === 'postgres' ? postgres.skipReason : undefined

  describe.skipIf(skipReason !== undefined)(
    `hajri-cloud webhook commands [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      // The cloud runs its dispatcher over the database the CLI writes to: one attempt per delivery
      // (a failed one is exhausted at once), deliveries allowed to the loopback receiver.
      const cloud = new TestCloud(kind, { webhooks: { allowlist: ['127.0.0.1'], retrySchedule: [0] } })
      const receiver = new WebhookReceiver()
      /** Paths the receiver answers 500 on. */
      const failing = new Set<string>()
      /** Every signing secret the CLI printed, to make sure no listing prints one. */
      const secrets: string[] = []
      let workDir: string
      let env: NodeJS.ProcessEnv
      let tenantId: string
      let otherTenantId: string

      const run = (...argv: string[]) => cli(env, workDir, argv)

      beforeAll(async () => {
        await receiver.start()
        receiver.respond((request) =>
          failing.has(request.path) ? { status: 500, body: 'receiver broken' } : { status: 204 },
        )
        await cloud.start()
        workDir = await mkdtemp(join(tmpdir(), 'hajri-webhook-cli-'))
        // The key the cloud seals signing secrets with, so that its dispatcher opens what the CLI sealed.
        env = {
          HAJRI_DATABASE_URL: cloud.databaseUrl,
          HAJRI_SECRET_KEY: TEST_SECRET_KEY,
          HAJRI_WEBHOOK_ALLOWLIST: '127.0.0.1',
        }
        tenantId = await createTenant()
        otherTenantId = await createTenant()
      })
      afterAll(async () => {
        await cloud.stop()
        await receiver.stop()
        if (workDir) await rm(workDir, { recursive: true, force: true })
      })

      async function createTenant(): Promise<string> {
        const email = `owner-${randomBytes(4).toString('hex')}@example.test`
        const result = expectSuccess(
          await run('tenant', 'create', '--name', 'Acme Pune', '--admin-email', email, '--json'),
        )
        return result.json<{ tenantId: string }>().tenantId
      }

      const newPath = () => `/hook/${randomBytes(6).toString('hex')}`

      async function createEndpoint(tenant: string, path: string, ...extra: string[]) {
        const result = expectSuccess(
          await run('webhook', 'create', '--tenant', tenant, '--url', receiver.url(path), ...extra, '--json'),
        )
        const created = result.json<CreatedEndpoint>()
        secrets.push(created.secret)
        return created
      }

      async function listEndpoints(tenant: string): Promise<WebhookEndpoint[]> {
        const result = expectSuccess(await run('webhook', 'list', '--tenant', tenant, '--json'))
        for (const secret of secrets) expect(result.stdout).not.toContain(secret)
        return result.json<WebhookEndpoint[]>()
      }

      const audit = async (tenant: string, ...extra: string[]) =>
        expectSuccess(await run('audit', 'list', '--tenant', tenant, ...extra, '--json')).json<AuditEntry[]>()

      const auditOf = async (tenant: string, target: string) =>
        (await audit(tenant, '--target', target)).map((e) => [e.action, e.actor])

      const consoleWebhooks = (token: string) =>
        cloud.app.inject({ method: 'GET', url: CONSOLE_WEBHOOKS, headers: bearer(token) })

      /** The endpoint's deliveries once `done` holds for them (the cloud's dispatcher runs on its own). */
      async function deliveriesWhen(
        tenant: string,
        endpointId: string,
        done: (deliveries: WebhookDelivery[]) => boolean,
      ): Promise<WebhookDelivery[]> {
        return vi.waitFor(
          async () => {
            const page = await cloud.services.webhookDeliveries.list(tenant, { endpointId, limit: 200 })
            if (!done(page.data)) throw new Error(`deliveries not there yet: ${JSON.stringify(page.data)}`)
            return page.data
          },
          { timeout: 10_000, interval: 50 },
        )
      }

      describe('admin-token', () => {
        it('create --json shows the token once; it administers the tenant over /api/console/v1', async () => {
          const result = expectSuccess(
            await run('admin-token', 'create', '--tenant', tenantId, '--name', 'ops script', '--json'),
          )
          const created = result.json<{ id: string; token: string; expiresAt: string }>()
          expect(created).toEqual({
            id: expect.stringMatching(/^adm_[0-9A-HJKMNP-TV-Z]{26}$/),
            name: 'ops script',
            status: 'active',
            createdAt: expect.any(String),
            expiresAt: expect.any(String),
            revokedAt: null,
            token: expect.stringMatching(/^hjt_/),
          })
          // 30 days unless chosen otherwise.
          const ttl = (parseTimestamp(created.expiresAt) as number) - nowMicros()
          expect(ttl).toBeGreaterThan(30 * 24 * HOUR - HOUR)
          expect(ttl).toBeLessThanOrEqual(30 * 24 * HOUR)

          const endpoint = await createEndpoint(tenantId, newPath())
          const res = await consoleWebhooks(created.token)
          expect(res.statusCode, res.body).toBe(200)
          expect(res.json().data.map((e: WebhookEndpoint) => e.id)).toContain(endpoint.id)
          // The token is the tenant's: another tenant's endpoints are not found with it.
          const theirs = await createEndpoint(otherTenantId, newPath())
          const other = await cloud.app.inject({
            method: 'GET',
            url: `${CONSOLE_WEBHOOKS}/${theirs.id}`,
            headers: bearer(created.token),
          })
          expect(other.statusCode).toBe(404)

          const listed = expectSuccess(await run('admin-token', 'list', '--tenant', tenantId, '--json'))
          expect(listed.stdout).not.toContain(created.token)
          expect(listed.json<{ id: string; status: string }[]>()).toContainEqual(
            expect.objectContaining({ id: created.id, name: 'ops script', status: 'active' }),
          )
          const human = expectSuccess(await run('admin-token', 'list', '--tenant', tenantId))
          expect(human.stdout).not.toContain(created.token)
          expect(human.stdout).toMatch(
            new RegExp(`^${created.id} {2}active {3}expires \\S+ {2}ops script$`, 'm'),
          )
        })

        it('create for a person prints the token with a warning, and takes --expires-in', async () => {
          const result = expectSuccess(
            await run('admin-token', 'create', '--tenant', tenantId, '--expires-in', '2h'),
          )
          const [first, token, warning] = result.stdout.trimEnd().split('\n')
          expect(first).toMatch(/^admin token adm_\w+, expires \S+$/)
          expect(token).toMatch(/^hjt_\S+$/)
          expect(warning).toContain('shown once')
          const expiresAt = parseTimestamp(first?.split('expires ')[1] ?? '') as number
          expect(expiresAt - nowMicros()).toBeGreaterThan(2 * HOUR - HOUR / 60)
          expect(expiresAt - nowMicros()).toBeLessThanOrEqual(2 * HOUR)
          expect((await consoleWebhooks(token as string)).statusCode).toBe(200)
        })

        it('revoke refuses the token from the very next request; both acts are audited', async () => {
          const created = expectSuccess(
            await run('admin-token', 'create', '--tenant', tenantId, '--json'),
          ).json<{ id: string; token: string }>()
          expect((await consoleWebhooks(created.token)).statusCode).toBe(200)
          const revoked = expectSuccess(
            await run('admin-token', 'revoke', '--tenant', tenantId, created.id, '--json'),
          )
          expect(revoked.json()).toMatchObject({
            id: created.id,
            status: 'revoked',
            revokedAt: expect.any(String),
          })
          expect(revoked.stdout).not.toContain(created.token)
          const next = await consoleWebhooks(created.token)
          expect(next.statusCode).toBe(401)
          expect(next.headers['www-authenticate']).toMatch(/^Bearer/)

          const again = expectSuccess(await run('admin-token', 'revoke', '--tenant', tenantId, created.id))
          expect(again.stdout).toBe(`admin token ${created.id} revoked\n`)
          expect(await auditOf(tenantId, created.id)).toEqual([
            ['admin_token.revoked', CLI_ACTOR],
            ['admin_token.created', CLI_ACTOR],
          ])
          const listed = expectSuccess(await run('admin-token', 'list', '--tenant', tenantId, '--json'))
          expect(
            listed.json<{ id: string; status: string }[]>().find((t) => t.id === created.id)?.status,
          ).toBe('revoked')
        })

        it("fails for an unknown tenant or token, or another tenant's (exit 1); usage errors exit 2", async () => {
          expectFailure(
            await run('admin-token', 'create', '--tenant', 'ten_00000000000000000000000000', '--json'),
            1,
            'tenant_not_found',
          )
          const theirs = expectSuccess(
            await run('admin-token', 'create', '--tenant', otherTenantId, '--json'),
          ).json<{ id: string; token: string }>()
          for (const id of ['adm_00000000000000000000000000', theirs.id]) {
            expect(
              expectFailure(
                await run('admin-token', 'revoke', '--tenant', tenantId, id, '--json'),
                1,
                'not_found',
              ),
            ).toContain(id)
          }
          expect((await consoleWebhooks(theirs.token)).statusCode).toBe(200)
          expectFailure(await run('admin-token', 'create', '--json'), 2, 'usage')
          expectFailure(await run('admin-token', 'list', '--json'), 2, 'usage')
          expectFailure(await run('admin-token', 'revoke', '--tenant', tenantId, '--json'), 2, 'usage')
          expectFailure(
            await run('admin-token', 'create', '--tenant', tenantId, '--expires-in', 'soon', '--json'),
            2,
            'usage',
          )
          expectFailure(
            await run('admin-token', 'create', '--tenant', tenantId, '--expires-in', '2y', '--json'),
            1,
            'validation_failed',
          )
        })
      })

      describe('webhook', () => {
        it('create --json shows the endpoint with its whsec_ secret, audited; list never shows a secret', async () => {
          const path = newPath()
          const created = await createEndpoint(
            tenantId,
            path,
            '--events',
            'attendance.punch.created,employee.updated',
            '--description',
            'payroll sync',
          )
          expect(created).toEqual({
            id: expect.stringMatching(/^whk_[0-9A-HJKMNP-TV-Z]{26}$/),
            url: receiver.url(path),
            description: 'payroll sync',
            events: ['attendance.punch.created', 'employee.updated'],
            status: 'active',
            disabledReason: null,
            failingSince: null,
            secrets: [{ id: expect.stringMatching(/^whs_/), createdAt: expect.any(String), expiresAt: null }],
            createdAt: expect.any(String),
            updatedAt: expect.any(String),
            // Standard Webhooks: whsec_ and the base64 key.
            secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
          })
          expect(await auditOf(tenantId, created.id)).toEqual([['webhook_endpoint.created', CLI_ACTOR]])
          const listed = (await listEndpoints(tenantId)).find((e) => e.id === created.id)
          const { secret: _secret, ...shown } = created
          expect(listed).toEqual(shown)
          expect(await listEndpoints(otherTenantId)).not.toContainEqual(
            expect.objectContaining({ id: created.id }),
          )
        })

        it('create prints the endpoint and its secret for a person; list shows one line per endpoint', async () => {
          const tenant = await createTenant()
          expect(expectSuccess(await run('webhook', 'list', '--tenant', tenant)).stdout).toBe(
            'no webhook endpoints\n',
          )
          expect(await listEndpoints(tenant)).toEqual([])
          const path = newPath()
          const result = expectSuccess(
            await run('webhook', 'create', '--tenant', tenant, '--url', receiver.url(path)),
          )
          const [first, second] = result.stdout.split('\n')
          expect(first).toMatch(new RegExp(`^webhook endpoint whk_\\w+ → ${receiver.url(path)}$`))
          const secret = second?.match(/^signing secret: (whsec_\S+)$/)?.[1] as string
          expect(secret).toBeDefined()
          secrets.push(secret)
          const filtered = await createEndpoint(tenant, newPath(), '--events', 'employee.created')
          const human = expectSuccess(await run('webhook', 'list', '--tenant', tenant))
            .stdout.trimEnd()
            .split('\n')
          expect(human).toHaveLength(2)
          expect(human[0]).toMatch(
            new RegExp(`^whk_\\w+ {2}active {4}${receiver.url(path)} {2}\\(every event\\)$`),
          )
          expect(human[1]).toContain(`${filtered.id}  active`)
          expect(human[1]).toMatch(/ {2}employee\.created$/)
          for (const s of secrets) expect(human.join('\n')).not.toContain(s)
        })

        it('refuses an http URL to a public host, loopback without the allowlist, or a non-URL (exit 1)', async () => {
          const refused = async (url: string, reason: string, environment = env) => {
            const result = await cli(environment, workDir, [
              'webhook',
              'create',
              '--tenant',
              tenantId,
              '--url',
              url,
              '--json',
            ])
            expect(expectFailure(result, 1, 'validation_failed')).toBe(`url ${reason}.`)
          }
          await refused('http://example.com/hook', 'must be an https:// URL')
          await refused('not a url', 'is not a URL')
          await refused('https://user:pass@example.com/hook', 'must not carry a user name or password')
          await refused(
            'https://10.0.0.1/hook',
            'must not point at a loopback, private, link-local or reserved address',
          )
          await refused(
            'https://169.254.169.254/latest',
            'must not point at a loopback, private, link-local or reserved address',
          )
          // HAJRI_WEBHOOK_ALLOWLIST is what lets the loopback receiver in: without it, refused.
          const { HAJRI_WEBHOOK_ALLOWLIST: _allowlist, ...strict } = env
          await refused(receiver.url(newPath()), 'must be an https:// URL', strict)
          await refused(
            'https://127.0.0.1/hook',
            'must not point at a loopback, private, link-local or reserved address',
            strict,
          )
          await refused(
            'https://[::1]/hook',
            'must not point at a loopback, private, link-local or reserved address',
            strict,
          )
          // Without --json the reason goes to stderr alone.
          const human = await run(
            'webhook',
            'create',
            '--tenant',
            tenantId,
            '--url',
            'http://example.com/hook',
          )
          expect(human.code).toBe(1)
          expect(human.stdout).toBe('')
          expect(human.stderr).toBe('hajri-cloud: url must be an https:// URL.\n')
          expect((await listEndpoints(tenantId)).map((e) => e.url)).not.toContain('http://example.com/hook')
        })

        it('refuses an unknown event type (exit 1) and usage mistakes (exit 2)', async () => {
          const message = expectFailure(
            await run(
              'webhook',
              'create',
              '--tenant',
              tenantId,
              '--url',
              receiver.url(newPath()),
              '--events',
              'attendance.punch.created,payroll.run',
              '--json',
            ),
            1,
            'validation_failed',
          )
          expect(message).toContain('payroll.run')
          expect(message).not.toContain('attendance.punch.created,')
          expectFailure(
            await run('webhook', 'create', '--url', receiver.url(newPath()), '--json'),
            2,
            'usage',
          )
          expect(
            expectFailure(await run('webhook', 'create', '--tenant', tenantId, '--json'), 2, 'usage'),
          ).toContain('--url is required')
          expect(expectFailure(await run('webhook', 'list', '--json'), 2, 'usage')).toContain(
            '--tenant is required',
          )
          for (const verb of ['pause', 'resume', 'delete', 'test', 'rotate-secret', 'reveal-secret']) {
            expectFailure(await run('webhook', verb, UNKNOWN_ENDPOINT, '--json'), 2, 'usage')
            expect(
              expectFailure(await run('webhook', verb, '--tenant', tenantId, '--json'), 2, 'usage'),
              verb,
            ).toContain('id of the webhook endpoint')
            expectFailure(
              await run('webhook', verb, '--tenant', tenantId, UNKNOWN_ENDPOINT, 'extra', '--json'),
              2,
              'usage',
            )
          }
          expectFailure(await run('webhook', 'disable', '--tenant', tenantId, '--json'), 2, 'usage')
        })

        it("fails with webhook_endpoint_not_found for an unknown endpoint or another tenant's (exit 1)", async () => {
          const theirs = await createEndpoint(otherTenantId, newPath())
          for (const id of [UNKNOWN_ENDPOINT, theirs.id]) {
            for (const verb of ['pause', 'resume', 'delete', 'test', 'rotate-secret', 'reveal-secret']) {
              const message = expectFailure(
                await run('webhook', verb, '--tenant', tenantId, id, '--json'),
                1,
                'webhook_endpoint_not_found',
              )
              expect(message, verb).toContain(id)
            }
          }
          expect((await listEndpoints(otherTenantId)).find((e) => e.id === theirs.id)?.status).toBe('active')
          expect(await audit(otherTenantId, '--target', theirs.id)).toHaveLength(1)
        })

        it('test sends a webhook.test to that endpoint alone, signed with its secret, audited', async () => {
          const path = newPath()
          const endpoint = await createEndpoint(tenantId, path)
          const bystander = newPath()
          await createEndpoint(tenantId, bystander)
          receiver.verifyWith(endpoint.secret)
          const result = expectSuccess(
            await run('webhook', 'test', '--tenant', tenantId, endpoint.id, '--json'),
          )
          const { messageId } = result.json<{ messageId: string }>()
          expect(messageId).toMatch(/^msg_/)
          await receiver.waitFor(() => receiver.to(path).length === 1)
          const [got] = receiver.to(path)
          expect(got?.headers['webhook-id']).toBe(messageId)
          expect(got?.verifiedWith).toEqual([endpoint.secret])
          expect(got?.json).toEqual({
            type: 'webhook.test',
            timestamp: expect.any(String),
            data: { message: expect.any(String), endpointId: endpoint.id, requestedBy: CLI_ACTOR },
          })
          const [delivery] = await deliveriesWhen(tenantId, endpoint.id, (d) => d[0]?.status === 'succeeded')
          expect(delivery).toMatchObject({ messageId, eventType: 'webhook.test', attempts: 1 })
          expect(receiver.to(bystander)).toEqual([])
          expect(await auditOf(tenantId, endpoint.id)).toEqual([
            ['webhook_endpoint.test_sent', CLI_ACTOR],
            ['webhook_endpoint.created', CLI_ACTOR],
          ])
          const human = expectSuccess(await run('webhook', 'test', '--tenant', tenantId, endpoint.id))
          expect(human.stdout).toMatch(
            new RegExp(
              `^test event msg_\\w+ queued for ${endpoint.id}; see it with \`deliveries list --endpoint ${endpoint.id}\`\n$`,
            ),
          )
        })

        it('pause holds deliveries, resume sends them; both audited, as JSON and for a person', async () => {
          const path = newPath()
          const endpoint = await createEndpoint(tenantId, path)
          const paused = expectSuccess(
            await run('webhook', 'pause', '--tenant', tenantId, endpoint.id, '--json'),
          )
          expect(paused.json()).toMatchObject({ id: endpoint.id, status: 'paused' })
          const { messageId } = expectSuccess(
            await run('webhook', 'test', '--tenant', tenantId, endpoint.id, '--json'),
          ).json<{ messageId: string }>()
          // Fanned out, and held: the dispatcher leaves a paused endpoint's deliveries pending.
          await deliveriesWhen(tenantId, endpoint.id, (d) => d.length === 1)
          await new Promise((resolve) => setTimeout(resolve, 600))
          expect(receiver.to(path)).toEqual([])
          expect(
            (await cloud.services.webhookDeliveries.list(tenantId, { endpointId: endpoint.id })).data,
          ).toEqual([expect.objectContaining({ messageId, status: 'pending', attempts: 0 })])
          expect((await listEndpoints(tenantId)).find((e) => e.id === endpoint.id)?.status).toBe('paused')

          const resumed = expectSuccess(await run('webhook', 'resume', '--tenant', tenantId, endpoint.id))
          expect(resumed.stdout).toBe(
            `webhook endpoint ${endpoint.id} resumed: held deliveries go out now, oldest first\n`,
          )
          await receiver.waitFor(() => receiver.to(path).length === 1)
          expect(receiver.to(path)[0]?.headers['webhook-id']).toBe(messageId)
          const again = expectSuccess(await run('webhook', 'pause', '--tenant', tenantId, endpoint.id))
          expect(again.stdout).toBe(
            `webhook endpoint ${endpoint.id} paused: deliveries are held until it is resumed\n`,
          )
          expect(await auditOf(tenantId, endpoint.id)).toEqual([
            ['webhook_endpoint.paused', CLI_ACTOR],
            ['webhook_endpoint.resumed', CLI_ACTOR],
            ['webhook_endpoint.test_sent', CLI_ACTOR],
            ['webhook_endpoint.paused', CLI_ACTOR],
            ['webhook_endpoint.created', CLI_ACTOR],
          ])
        })

        it('rotate-secret --grace 1h signs with old and new side by side; reveal-secret shows the new one, audited', async () => {
          const path = newPath()
          const endpoint = await createEndpoint(tenantId, path)
          const before = nowMicros()
          const rotated = expectSuccess(
            await run(
              'webhook',
              'rotate-secret',
              '--tenant',
              tenantId,
              endpoint.id,
              '--grace',
              '1h',
              '--json',
            ),
          ).json<{ secret: string; previousSecretsExpireAt: string }>()
          secrets.push(rotated.secret)
          expect(rotated.secret).toMatch(/^whsec_/)
          expect(rotated.secret).not.toBe(endpoint.secret)
          const expires = parseTimestamp(rotated.previousSecretsExpireAt) as number
          expect(expires).toBeGreaterThanOrEqual(before + HOUR)
          expect(expires).toBeLessThanOrEqual(nowMicros() + HOUR)
          const listed = (await listEndpoints(tenantId)).find((e) => e.id === endpoint.id)
          expect(listed?.secrets.map((s) => s.expiresAt)).toEqual([rotated.previousSecretsExpireAt, null])

          receiver.verifyWith(endpoint.secret, rotated.secret)
          expectSuccess(await run('webhook', 'test', '--tenant', tenantId, endpoint.id))
          await receiver.waitFor(() => receiver.to(path).length === 1)
          // A receiver holding either secret verifies during the grace period.
          expect(receiver.to(path)[0]?.verifiedWith).toEqual([endpoint.secret, rotated.secret])

          const revealed = expectSuccess(
            await run('webhook', 'reveal-secret', '--tenant', tenantId, endpoint.id, '--json'),
          )
          expect(revealed.json()).toEqual({ secret: rotated.secret })
          expect(
            expectSuccess(await run('webhook', 'reveal-secret', '--tenant', tenantId, endpoint.id)).stdout,
          ).toBe(`${rotated.secret}\n`)
          expect(await auditOf(tenantId, endpoint.id)).toEqual([
            ['webhook_endpoint.secret_revealed', CLI_ACTOR],
            ['webhook_endpoint.secret_revealed', CLI_ACTOR],
            ['webhook_endpoint.test_sent', CLI_ACTOR],
            ['webhook_endpoint.secret_rotated', CLI_ACTOR],
            ['webhook_endpoint.created', CLI_ACTOR],
          ])
          const human = expectSuccess(
            await run('webhook', 'rotate-secret', '--tenant', tenantId, endpoint.id),
          )
          const newSecret = human.stdout.match(/^new signing secret: (whsec_\S+)\n/)?.[1] as string
          expect(newSecret).toBeDefined()
          secrets.push(newSecret)
          // The default grace is a day.
          const until = parseTimestamp(human.stdout.match(/until (\S+)\n$/)?.[1] ?? '') as number
          expect(until - nowMicros()).toBeGreaterThan(23 * HOUR)
          expect(until - nowMicros()).toBeLessThanOrEqual(24 * HOUR)

          expectFailure(
            await run(
              'webhook',
              'rotate-secret',
              '--tenant',
              tenantId,
              endpoint.id,
              '--grace',
              'soon',
              '--json',
            ),
            2,
            'usage',
          )
          expectFailure(
            await run(
              'webhook',
              'rotate-secret',
              '--tenant',
              tenantId,
              endpoint.id,
              '--grace',
              '31d',
              '--json',
            ),
            1,
            'validation_failed',
          )
        })

        it('delete removes the endpoint: gone from the list, and every later command fails (exit 1)', async () => {
          const endpoint = await createEndpoint(tenantId, newPath())
          const deleted = expectSuccess(
            await run('webhook', 'delete', '--tenant', tenantId, endpoint.id, '--json'),
          )
          expect(deleted.json()).toEqual({ id: endpoint.id, deleted: true })
          expect((await listEndpoints(tenantId)).map((e) => e.id)).not.toContain(endpoint.id)
          for (const verb of ['delete', 'test', 'resume']) {
            expectFailure(
              await run('webhook', verb, '--tenant', tenantId, endpoint.id, '--json'),
              1,
              'webhook_endpoint_not_found',
            )
          }
          expect(await auditOf(tenantId, endpoint.id)).toEqual([
            ['webhook_endpoint.deleted', CLI_ACTOR],
            ['webhook_endpoint.created', CLI_ACTOR],
          ])
        })
      })

      describe('deliveries', () => {
        let tenant: string
        let endpoint: CreatedEndpoint
        let path: string
        /** Two test events, each attempted once and answered 500: exhausted. */
        let exhausted: WebhookDelivery[]
        let since: string

        beforeAll(async () => {
          tenant = await createTenant()
          path = newPath()
          failing.add(path)
          since = new Date().toISOString()
          endpoint = await createEndpoint(tenant, path)
          for (let i = 0; i < 2; i++)
            expectSuccess(await run('webhook', 'test', '--tenant', tenant, endpoint.id))
          exhausted = await deliveriesWhen(
            tenant,
            endpoint.id,
            (d) => d.length === 2 && d.every((x) => x.status === 'exhausted'),
          )
        })

        const list = async (...extra: string[]) =>
          expectSuccess(await run('deliveries', 'list', '--tenant', tenant, ...extra, '--json')).json<{
            data: WebhookDelivery[]
            nextCursor: string | null
          }>()

        it('list --json pages newest first and filters by endpoint, status and event type', async () => {
          const [newer, older] = exhausted as [WebhookDelivery, WebhookDelivery]
          const all = await list()
          expect(all).toEqual({ data: exhausted, nextCursor: null })
          expect(newer).toMatchObject({
            id: expect.stringMatching(/^dlv_/),
            endpointId: endpoint.id,
            messageId: expect.stringMatching(/^msg_/),
            eventType: 'webhook.test',
            status: 'exhausted',
            attempts: 1,
            nextAttemptAt: null,
            lastAttemptAt: expect.any(String),
            payload: { size: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
          })
          expect(newer.id > older.id).toBe(true)
          const first = await list('--limit', '1')
          expect(first.data).toEqual([newer])
          expect(first.nextCursor).toEqual(expect.any(String))
          expect(await list('--limit', '1', '--cursor', first.nextCursor as string)).toEqual({
            data: [older],
            nextCursor: null,
          })
          expect((await list('--endpoint', endpoint.id, '--status', 'exhausted')).data).toHaveLength(2)
          expect((await list('--status', 'succeeded')).data).toEqual([])
          expect((await list('--event-type', 'webhook.test')).data).toHaveLength(2)
          expect((await list('--event-type', 'attendance.punch.created')).data).toEqual([])
          expect((await list('--endpoint', UNKNOWN_ENDPOINT)).data).toEqual([])
          expect((await list('--from', since)).data).toHaveLength(2)
          expect((await list('--to', since)).data).toEqual([])
          // Another tenant sees none of them.
          expect(
            expectSuccess(
              await run('deliveries', 'list', '--tenant', otherTenantId, '--endpoint', endpoint.id, '--json'),
            ).json(),
          ).toEqual({ data: [], nextCursor: null })
        })

        it('list prints one line per delivery for a person, and says where the next page starts', async () => {
          const human = expectSuccess(await run('deliveries', 'list', '--tenant', tenant)).stdout
          const lines = human.trimEnd().split('\n')
          expect(lines).toHaveLength(2)
          for (const [i, d] of exhausted.entries()) {
            expect(lines[i]).toMatch(
              new RegExp(`^${d.id} {2}exhausted {2}1 attempt {4}webhook\\.test {14}${endpoint.id}$`),
            )
          }
          const paged = expectSuccess(
            await run('deliveries', 'list', '--tenant', tenant, '--limit', '1'),
          ).stdout
          expect(paged).toMatch(/\nmore: --cursor \S+\n$/)
          expect(expectSuccess(await run('deliveries', 'list', '--tenant', otherTenantId)).stdout).toBe(
            'no deliveries\n',
          )
        })

        it('show gives the payload and every attempt, as JSON and for a person', async () => {
          const delivery = exhausted[0] as WebhookDelivery
          const shown = expectSuccess(
            await run('deliveries', 'show', '--tenant', tenant, delivery.id, '--json'),
          ).json<WebhookDeliveryDetail>()
          expect(shown).toEqual({
            ...delivery,
            body: expect.any(String),
            attemptLog: [
              {
                number: 1,
                trigger: 'automatic',
                at: expect.any(String),
                durationMs: expect.any(Number),
                responseStatus: 500,
                responseBody: 'receiver broken',
                error: null,
              },
            ],
          })
          // The body as sent, byte for byte.
          const sent = receiver.to(path).find((r) => r.headers['webhook-id'] === delivery.messageId)
          expect(shown.body).toBe(sent?.body)
          expect(Buffer.byteLength(shown.body)).toBe(delivery.payload.size)
          const human = expectSuccess(await run('deliveries', 'show', '--tenant', tenant, delivery.id)).stdout
          const lines = human.trimEnd().split('\n')
          expect(lines[0]).toContain(delivery.id)
          expect(lines[1]).toBe(
            `message ${delivery.messageId}, ${delivery.payload.size} bytes, sha256 ${delivery.payload.sha256}`,
          )
          expect(lines[2]).toMatch(/^ {2}#1 \S+ automatic 500 \d+ ms$/)
          expect(lines).toHaveLength(3)
        })

        it('retry attempts an exhausted delivery again with the same webhook-id, as manual, audited', async () => {
          const delivery = exhausted[1] as WebhookDelivery
          failing.delete(path)
          try {
            const retried = expectSuccess(
              await run('deliveries', 'retry', '--tenant', tenant, delivery.id, '--json'),
            )
            expect(retried.json()).toMatchObject({
              id: delivery.id,
              status: 'pending',
              nextAttemptAt: expect.any(String),
            })
            const done = await deliveriesWhen(
              tenant,
              endpoint.id,
              (d) => d.find((x) => x.id === delivery.id)?.status === 'succeeded',
            )
            expect(done.find((x) => x.id === delivery.id)?.attempts).toBe(2)
            const sent = receiver.to(path).filter((r) => r.headers['webhook-id'] === delivery.messageId)
            expect(sent).toHaveLength(2)
            expect(sent[1]?.body).toBe(sent[0]?.body)
            const shown = expectSuccess(
              await run('deliveries', 'show', '--tenant', tenant, delivery.id, '--json'),
            ).json<WebhookDeliveryDetail>()
            expect(shown.attemptLog.map((a) => [a.number, a.trigger, a.responseStatus])).toEqual([
              [1, 'automatic', 500],
              [2, 'manual', 204],
            ])
            expect(await auditOf(tenant, delivery.id)).toEqual([['webhook_delivery.retried', CLI_ACTOR]])
            const [entry] = await audit(tenant, '--target', delivery.id)
            expect(entry).toMatchObject({ target: { type: 'webhook_delivery', id: delivery.id }, ip: null })

            // Only a failed or exhausted delivery is retried.
            expect(
              expectFailure(
                await run('deliveries', 'retry', '--tenant', tenant, delivery.id, '--json'),
                1,
                'webhook_delivery_not_retryable',
              ),
            ).toContain('succeeded')
          } finally {
            failing.add(path)
          }
        })

        it('replay --endpoint --since attempts every failed delivery of the endpoint again, audited', async () => {
          const left = exhausted[0] as WebhookDelivery
          const result = expectSuccess(
            await run(
              'deliveries',
              'replay',
              '--tenant',
              tenant,
              '--endpoint',
              endpoint.id,
              '--since',
              since,
              '--json',
            ),
          )
          expect(result.json()).toEqual({ replayed: 1 })
          // Still answered 500: attempted again (manual), and exhausted again.
          await deliveriesWhen(tenant, endpoint.id, (d) => d.find((x) => x.id === left.id)?.attempts === 2)
          const shown = expectSuccess(
            await run('deliveries', 'show', '--tenant', tenant, left.id, '--json'),
          ).json<WebhookDeliveryDetail>()
          expect(shown.status).toBe('exhausted')
          expect(shown.attemptLog.map((a) => [a.number, a.trigger, a.responseStatus])).toEqual([
            [1, 'automatic', 500],
            [2, 'manual', 500],
          ])
          expect(await auditOf(tenant, endpoint.id)).toContainEqual(['webhook_delivery.replayed', CLI_ACTOR])
          const human = expectSuccess(
            await run(
              'deliveries',
              'replay',
              '--tenant',
              tenant,
              '--endpoint',
              endpoint.id,
              '--since',
              since,
            ),
          )
          expect(human.stdout).toBe(`1 failed deliveries to ${endpoint.id} will be attempted again now\n`)
          // Nothing created since now: nothing to replay.
          const later = new Date(Date.now() + 60_000).toISOString()
          expect(
            expectSuccess(
              await run(
                'deliveries',
                'replay',
                '--tenant',
                tenant,
                '--endpoint',
                endpoint.id,
                '--since',
                later,
                '--json',
              ),
            ).json(),
          ).toEqual({ replayed: 0 })
        })

        it('fails on an unknown delivery or endpoint, or a bad time (exit 1); usage mistakes exit 2', async () => {
          for (const verb of ['show', 'retry']) {
            expect(
              expectFailure(
                await run('deliveries', verb, '--tenant', tenant, UNKNOWN_DELIVERY, '--json'),
                1,
                'webhook_delivery_not_found',
              ),
            ).toContain(UNKNOWN_DELIVERY)
            // Another tenant's delivery is not found either.
            expectFailure(
              await run(
                'deliveries',
                verb,
                '--tenant',
                otherTenantId,
                (exhausted[0] as WebhookDelivery).id,
                '--json',
              ),
              1,
              'webhook_delivery_not_found',
            )
            expectFailure(await run('deliveries', verb, UNKNOWN_DELIVERY, '--json'), 2, 'usage')
            expectFailure(await run('deliveries', verb, '--tenant', tenant, '--json'), 2, 'usage')
          }
          expectFailure(
            await run(
              'deliveries',
              'replay',
              '--tenant',
              tenant,
              '--endpoint',
              UNKNOWN_ENDPOINT,
              '--since',
              since,
              '--json',
            ),
            1,
            'webhook_endpoint_not_found',
          )
          expectFailure(
            await run(
              'deliveries',
              'replay',
              '--tenant',
              tenant,
              '--endpoint',
              endpoint.id,
              '--since',
              'yesterday',
              '--json',
            ),
            1,
            'validation_failed',
          )
          expectFailure(
            await run('deliveries', 'replay', '--tenant', tenant, '--since', since, '--json'),
            2,
            'usage',
          )
          expectFailure(
            await run('deliveries', 'replay', '--tenant', tenant, '--endpoint', endpoint.id, '--json'),
            2,
            'usage',
          )
          expectFailure(await run('deliveries', 'list', '--json'), 2, 'usage')
          expectFailure(
            await run('deliveries', 'list', '--tenant', tenant, '--status', 'lost', '--json'),
            2,
            'usage',
          )
          expectFailure(
            await run('deliveries', 'list', '--tenant', tenant, '--event-type', 'payroll.run', '--json'),
            2,
            'usage',
          )
          for (const limit of ['0', '201', 'ten']) {
            expectFailure(
              await run('deliveries', 'list', '--tenant', tenant, '--limit', limit, '--json'),
              2,
              'usage',
            )
          }
          expectFailure(await run('deliveries', 'list', '--tenant', tenant, 'extra', '--json'), 2, 'usage')
        })

        it('list refuses a --from or --to that is not an RFC 3339 time instead of ignoring it', async () => {
          for (const option of ['--from', '--to']) {
            const result = await run('deliveries', 'list', '--tenant', tenant, option, 'yesterday', '--json')
            expect(result.code, `${option}: ${result.stdout}`).not.toBe(0)
            expect(result.json<{ error: { message: string } }>().error.message).toContain(option.slice(2))
          }
        })
      })
    },
  )
}
