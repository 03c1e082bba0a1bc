import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../cloud/app.js'
import { COMMANDS, runCli, USAGE } from '../../cloud/cli.js'
import { type DatabaseHandle, openDatabase } from '../../cloud/db/database.js'
import { migrations } from '../../cloud/db/migrations/index.js'
import { hashApiKey } from '../../cloud/features/api-keys/api-key-format.js'
import { MAX_API_KEY_TTL_SECONDS } from '../../cloud/features/api-keys/service.js'
import { ID_PATTERN } from '../../shared/ids.js'
import { nowMicros, parseTimestamp } from '../../shared/time.js'
import { type CliResult, captureCli } from '../support/cli-capture.js'
import { bearer, createTestDatabaseUrl, type DatabaseKind } from '../support/cloud-harness.js'
import { freePort } from '../support/e2e-kit.js'
import { postgresAvailability } from '../support/services.js'

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const HEADER = 'employeeCode,name,email,department,location,status'
const DAY = 86_400_000_000

/** Runs hajri-cloud in-process against `env`, capturing what it writes. */
function cli(env: NodeJS.ProcessEnv, cwd: string, ...argv: string[]): Promise<CliResult> {
  return captureCli(runCli, argv, { env, cwd })
}

/** A failure as --json reports it: the exit status, and `{error: {code, message}}` on stdout. */
function expectFailure(result: CliResult, status: number, code: string): string {
  expect(result.code, result.stdout + result.stderr).toBe(status)
  const { error } = result.json() as { error: { code: string; message: string } }
  expect(error.code).toBe(code)
  expect(result.stderr).toContain('hajri-cloud: ')
  return error.message
}

const postgres = await postgresAvailability()

for (const kind of ['sqlite', 'postgres'] as DatabaseKind[]) {
  const skipReason = kind === 'postgres' ? postgres.skipReason : undefined

  describe.skipIf(skipReason !== undefined)(
    `hajri-cloud CLI [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      let workDir: string
      let databaseUrl: string
      let dropDatabase: () => Promise<void>
      let env: NodeJS.ProcessEnv
      const run = (...argv: string[]) => cli(env, workDir, ...argv)

      beforeAll(async () => {
        workDir = await mkdtemp(join(tmpdir(), 'hajri-cli-'))
        const target = await createTestDatabaseUrl(kind)
        databaseUrl = target.url
        dropDatabase = target.drop
        env = { HAJRI_DATABASE_URL: databaseUrl }
      })
      afterAll(async () => {
        await dropDatabase()
        await rm(workDir, { recursive: true, force: true })
      })

      /** A fresh tenant through the CLI, as an operator would make one. */
      async function createTenant(): Promise<string> {
        const email = `owner-${Math.random().toString(36).slice(2)}@example.test`
        const result = await run('tenant', 'create', '--name', 'Acme Pune', '--admin-email', email, '--json')
        expect(result.code, result.stderr).toBe(0)
        return (result.json() as { tenantId: string }).tenantId
      }

      async function writeCsv(name: string, text: string): Promise<string> {
        await writeFile(join(workDir, name), text)
        return name
      }

      /** Reads the database the CLI wrote, with a handle of the test's own. */
      async function withDatabase<T>(work: (database: DatabaseHandle) => Promise<T>): Promise<T> {
        const database = openDatabase(databaseUrl, { poolSize: 1 })
        try {
          return await work(database)
        } finally {
          await database.close()
        }
      }

      describe('migrate', () => {
        it('applies every migration once, then reports nothing to apply', async () => {
          const fresh = await createTestDatabaseUrl(kind)
          try {
            const first = await cli({ HAJRI_DATABASE_URL: fresh.url }, workDir, 'migrate', '--json')
            expect(first.code, first.stderr).toBe(0)
            expect(first.json()).toEqual({ applied: Object.keys(migrations), database: expect.any(String) })
            const second = await cli({ HAJRI_DATABASE_URL: fresh.url }, workDir, 'migrate', '--json')
            expect(second.code).toBe(0)
            expect(second.json()).toMatchObject({ applied: [] })
            const human = await cli({ HAJRI_DATABASE_URL: fresh.url }, workDir, 'migrate')
            expect(human.code).toBe(0)
            expect(human.stdout).toContain('schema up to date')
          } finally {
            await fresh.drop()
          }
        })
      })

      describe('tenant create', () => {
        it('creates a tenant and its console owner, and shows the one-time password once', async () => {
          const result = await run(
            'tenant',
            'create',
            '--name',
            'Acme Chakan',
            '--admin-email',
            'HR.Head@Acme.Example',
            '--json',
          )
          expect(result.code, result.stderr).toBe(0)
          const created = result.json()
          expect(created).toEqual({
            tenantId: expect.stringMatching(new RegExp(ID_PATTERN)),
            adminEmail: 'hr.head@acme.example',
            adminPassword: expect.any(String),
          })
          expect(String(created.tenantId)).toMatch(/^ten_/)
          expect(String(created.adminPassword).length).toBeGreaterThanOrEqual(12)
          await withDatabase(async ({ db }) => {
            const tenant = await db
              .selectFrom('tenants')
              .selectAll()
              .where('id', '=', String(created.tenantId))
              .executeTakeFirstOrThrow()
            expect(tenant).toMatchObject({
              name: 'Acme Chakan',
              time_zone: 'Asia/Kolkata',
              backfill_days: 90,
            })
            const owner = await db
              .selectFrom('console_users')
              .selectAll()
              .where('tenant_id', '=', String(created.tenantId))
              .executeTakeFirstOrThrow()
            expect(owner).toMatchObject({ email: 'hr.head@acme.example', role: 'owner' })
            // Stored hashed: the password shown is not in the row.
            expect(JSON.stringify(owner)).not.toContain(String(created.adminPassword))
          })
        })

        it('takes a time zone and a backfill window', async () => {
          const result = await run(
            'tenant',
            'create',
            '--name',
            'Acme Berlin',
            '--admin-email',
            'hr@berlin.example',
            '--time-zone',
            'Europe/Berlin',
            '--backfill-days',
            '30',
            '--json',
          )
          expect(result.code, result.stderr).toBe(0)
          const { tenantId } = result.json() as { tenantId: string }
          await withDatabase(async ({ db }) => {
            const tenant = await db
              .selectFrom('tenants')
              .selectAll()
              .where('id', '=', tenantId)
              .executeTakeFirstOrThrow()
            expect(tenant).toMatchObject({ time_zone: 'Europe/Berlin', backfill_days: 30 })
          })
        })

        it('prints the password for a person without --json', async () => {
          const result = await run('tenant', 'create', '--name', 'Acme', '--admin-email', 'p@human.example')
          expect(result.code).toBe(0)
          expect(result.stdout).toMatch(/^tenant ten_\w+ created/)
          expect(result.stdout).toMatch(/one-time password: \S+/)
        })

        it('refuses wrong values with validation_failed (exit 1)', async () => {
          const message = expectFailure(
            await run(
              'tenant',
              'create',
              '--name',
              'X',
              '--admin-email',
              'not-an-email',
              '--time-zone',
              'Mars/Base',
              '--json',
            ),
            1,
            'validation_failed',
          )
          expect(message).toContain('admin email')
          expect(message).toContain('Mars/Base')
        })

        it('takes an admin email that is already a console user of another tenant (emails are unique per tenant)', async () => {
          const args = [
            'tenant',
            'create',
            '--name',
            'Twice',
            '--admin-email',
            'twice@acme.example',
            '--json',
          ]
          const first = await run(...args)
          const second = await run(...args)
          expect([first.code, second.code]).toEqual([0, 0])
          expect(second.json().tenantId).not.toBe(first.json().tenantId)
        })

        it('is a usage error (exit 2) without --name or --admin-email, or with a non-numeric window', async () => {
          expectFailure(await run('tenant', 'create', '--admin-email', 'a@b.example', '--json'), 2, 'usage')
          expectFailure(await run('tenant', 'create', '--name', 'X', '--json'), 2, 'usage')
          expectFailure(
            await run(
              'tenant',
              'create',
              '--name',
              'X',
              '--admin-email',
              'a@b.example',
              '--backfill-days',
              '3 months',
              '--json',
            ),
            2,
            'usage',
          )
        })
      })

      describe('employees import', () => {
        let tenantId: string

        beforeAll(async () => {
          tenantId = await createTenant()
        })

        // As payroll exports them: a byte-order mark and CRLF line ends. Line numbers are the file's.
        const firstExport = [
          `\uFEFF${HEADER}`,
          'E001,Asha Rao,asha@acme.example,Assembly,Pune,ACTIVE', // 2: good
          'E002,Ravi Kumar,not-an-email,Assembly,Pune,ACTIVE', // 3: bad email
          'E003,,e3@acme.example,Stores,Pune,ACTIVE', // 4: no name
          'E001,Asha Again,asha2@acme.example,Assembly,Pune,ACTIVE', // 5: duplicate code
          'E004,Only Three,fields', // 6: wrong field count
          'E005,Meera Iyer,,Paint,Chakan,RETIRED', // 7: unknown status
          'E006,Kiran Patil,,Stores,,inactive', // 8: good, status in any case
          'E007,"Lal, Mohan",,,,', // 9: good, quoted comma, status defaults to ACTIVE
        ].join('\r\n')

        it('imports the good lines and reports each bad one with its line number', async () => {
          const file = await writeCsv('first.csv', `${firstExport}\r\n`)
          const result = await run('employees', 'import', '--tenant', tenantId, file, '--json')
          expect(result.code, result.stderr).toBe(0)
          const summary = result.json() as {
            created: number
            updated: number
            unchanged: number
            rejected: { line: number; reason: string }[]
          }
          expect(summary).toMatchObject({ created: 3, updated: 0, unchanged: 0 })
          expect(summary.rejected.map((r) => r.line)).toEqual([3, 4, 5, 6, 7])
          const reason = (line: number) => summary.rejected.find((r) => r.line === line)?.reason ?? ''
          expect(reason(3)).toMatch(/^email: /)
          expect(reason(4)).toMatch(/^name: /)
          expect(reason(5)).toContain('E001')
          expect(reason(5)).toContain('line 2')
          expect(reason(6)).toMatch(/3 fields.*6/)
          expect(reason(7)).toMatch(/^status: /)

          await withDatabase(async ({ db }) => {
            const rows = await db
              .selectFrom('employees')
              .select(['employee_code', 'name', 'email', 'department', 'location', 'status'])
              .where('tenant_id', '=', tenantId)
              .orderBy('employee_code')
              .execute()
            expect(rows).toEqual([
              {
                employee_code: 'E001',
                name: 'Asha Rao',
                email: 'asha@acme.example',
                department: 'Assembly',
                location: 'Pune',
                status: 'ACTIVE',
              },
              {
                employee_code: 'E006',
                name: 'Kiran Patil',
                email: null,
                department: 'Stores',
                location: null,
                status: 'INACTIVE',
              },
              {
                employee_code: 'E007',
                name: 'Lal, Mohan',
                email: null,
                department: null,
                location: null,
                status: 'ACTIVE',
              },
            ])
          })
        })

        it('reports updated and unchanged employees on a re-import', async () => {
          const second = [
            HEADER,
            'E001,Asha Rao,asha@acme.example,Assembly,Pune,ACTIVE', // unchanged
            'E006,Kiran Patil,,Dispatch,,INACTIVE', // department changed
            'E007,"Lal, Mohan",,,,ACTIVE', // unchanged: blank status meant ACTIVE
            'E008,Sunita Deshmukh,sunita@acme.example,Quality,Pune,ACTIVE', // new
          ].join('\n')
          const file = await writeCsv('second.csv', second)
          const result = await run('employees', 'import', '--tenant', tenantId, file, '--json')
          expect(result.code, result.stderr).toBe(0)
          expect(result.json()).toEqual({ created: 1, updated: 1, unchanged: 2, rejected: [] })

          const again = await run('employees', 'import', '--tenant', tenantId, file, '--json')
          expect(again.json()).toEqual({ created: 0, updated: 0, unchanged: 4, rejected: [] })
          await withDatabase(async ({ db }) => {
            const row = await db
              .selectFrom('employees')
              .select('department')
              .where('tenant_id', '=', tenantId)
              .where('employee_code', '=', 'E006')
              .executeTakeFirstOrThrow()
            expect(row.department).toBe('Dispatch')
          })
        })

        it('summarises for a person without --json', async () => {
          const file = await writeCsv('human.csv', `${firstExport}\n`)
          const result = await run('employees', 'import', '--tenant', await createTenant(), file)
          expect(result.code).toBe(0)
          expect(result.stdout).toMatch(/^created 3, updated 0, unchanged 0, rejected 5\n/)
          expect(result.stdout).toContain('line 3: email: ')
        })

        it('fails (exit 1, invalid_csv) on a wrong header and imports nothing', async () => {
          const file = await writeCsv('wrong-header.csv', 'code,fullName,email\nE900,Nobody,n@acme.example\n')
          const message = expectFailure(
            await run('employees', 'import', '--tenant', tenantId, file, '--json'),
            1,
            'invalid_csv',
          )
          expect(message).toContain('employeeCode')
          expect(message).toContain('fullName')
          await withDatabase(async ({ db }) => {
            const row = await db
              .selectFrom('employees')
              .select('id')
              .where('tenant_id', '=', tenantId)
              .where('employee_code', '=', 'E900')
              .executeTakeFirst()
            expect(row).toBeUndefined()
          })
        })

        it('fails on an empty file, a missing file and an unknown tenant', async () => {
          const empty = await writeCsv('empty.csv', '')
          expectFailure(
            await run('employees', 'import', '--tenant', tenantId, empty, '--json'),
            1,
            'invalid_csv',
          )
          expectFailure(
            await run('employees', 'import', '--tenant', tenantId, 'no-such-file.csv', '--json'),
            1,
            'file_not_found',
          )
          const file = await writeCsv('ok.csv', `${HEADER}\nE100,Someone,,,,\n`)
          expectFailure(
            await run('employees', 'import', '--tenant', 'ten_00000000000000000000000000', file, '--json'),
            1,
            'tenant_not_found',
          )
        })

        it('is a usage error (exit 2) without --tenant, without a file, or with two files', async () => {
          const file = await writeCsv('usage.csv', `${HEADER}\n`)
          expectFailure(await run('employees', 'import', file, '--json'), 2, 'usage')
          expectFailure(await run('employees', 'import', '--tenant', tenantId, '--json'), 2, 'usage')
          expectFailure(
            await run('employees', 'import', '--tenant', tenantId, file, file, '--json'),
            2,
            'usage',
          )
        })
      })

      describe('api-key create', () => {
        let tenantId: string
        let app: FastifyInstance
        let database: DatabaseHandle

        beforeAll(async () => {
          tenantId = await createTenant()
          const file = await writeCsv('for-keys.csv', `${HEADER}\nK001,Key Holder,,,,\n`)
          expect((await run('employees', 'import', '--tenant', tenantId, file)).code).toBe(0)
          // The API, in-process, over the very database the CLI wrote to.
          database = openDatabase(databaseUrl, { poolSize: 2 })
          app = await buildApp({
            config: { bodyLimitBytes: 1024 * 1024, trustProxy: false, logLevel: 'silent' },
            database,
            logger: false,
          })
          await app.ready()
        })
        afterAll(async () => {
          await app.close()
        })

        const createKey = (...extra: string[]) =>
          run('api-key', 'create', '--tenant', tenantId, '--scopes', 'employees:read', ...extra, '--json')

        it('creates a key that the API accepts, with only the scopes it was given', async () => {
          const before = nowMicros()
          const result = await run(
            'api-key',
            'create',
            '--tenant',
            tenantId,
            '--scopes',
            'employees:read, attendance:write',
            '--name',
            'payroll sync',
            '--rate-limit',
            '120',
            '--json',
          )
          const after = nowMicros()
          expect(result.code, result.stderr).toBe(0)
          const created = result.json() as Record<string, unknown> & { key: string; expiresAt: string }
          expect(created).toMatchObject({
            id: expect.stringMatching(/^key_/),
            key: expect.stringMatching(/^hjk_[0-9A-Za-z]{36}$/),
            expiresAt: expect.any(String),
            name: 'payroll sync',
            scopes: ['employees:read', 'attendance:write'],
            rateLimitPerMinute: 120,
          })
          // 90 days by default.
          const expiresAt = parseTimestamp(created.expiresAt) as number
          expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 90 * DAY)
          expect(expiresAt).toBeLessThanOrEqual(after + 90 * DAY)

          const list = await app.inject({
            method: 'GET',
            url: '/api/public/v1/employees',
            headers: bearer(created.key),
          })
          expect(list.statusCode).toBe(200)
          expect(list.json().data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['K001'])
          const punches = await app.inject({
            method: 'GET',
            url: '/api/public/v1/attendance/punches',
            headers: bearer(created.key),
          })
          expect(punches.statusCode).toBe(403)

          // Shown once: the database has its hash only.
          await withDatabase(async ({ db }) => {
            const row = await db
              .selectFrom('api_keys')
              .selectAll()
              .where('id', '=', String(created.id))
              .executeTakeFirstOrThrow()
            expect(row.key_hash).toBe(hashApiKey(created.key))
            expect(JSON.stringify(row)).not.toContain(created.key)
          })
        })

        it('prints the key for a person without --json', async () => {
          const result = await run('api-key', 'create', '--tenant', tenantId, '--scopes', 'employees:read')
          expect(result.code).toBe(0)
          expect(result.stdout).toMatch(/^API key key_\w+ \(employees:read\)/)
          expect(result.stdout).toMatch(/\nhjk_[0-9A-Za-z]{36}\n/)
        })

        it('takes --expires-in up to 2 years', async () => {
          const before = nowMicros()
          const result = await createKey('--expires-in', '2y')
          const after = nowMicros()
          expect(result.code, result.stderr).toBe(0)
          const expiresAt = parseTimestamp(String(result.json().expiresAt)) as number
          const ttl = MAX_API_KEY_TTL_SECONDS * 1_000_000
          expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + ttl)
          expect(expiresAt).toBeLessThanOrEqual(after + ttl)

          const hours = await createKey('--expires-in', '12h')
          expect(hours.code).toBe(0)
          const inTwelveHours = parseTimestamp(String(hours.json().expiresAt)) as number
          expect(inTwelveHours).toBeLessThan(expiresAt)
        })

        it('refuses --expires-in beyond 2 years or under a minute (exit 1, validation_failed)', async () => {
          for (const ttl of ['731d', '3y', '63072001', '59s']) {
            const message = expectFailure(await createKey('--expires-in', ttl), 1, 'validation_failed')
            expect(message, ttl).toContain('expiry')
          }
        })

        it('is a usage error (exit 2) for an --expires-in that is not a duration', async () => {
          for (const ttl of ['90 days', '1.5y', '-1d', 'forever']) {
            const message = expectFailure(await createKey('--expires-in', ttl), 2, 'usage')
            expect(message, ttl).toContain('--expires-in')
          }
        })

        it('refuses an unknown scope, naming it', async () => {
          const result = await run(
            'api-key',
            'create',
            '--tenant',
            tenantId,
            '--scopes',
            'employees:read,employees:write',
            '--json',
          )
          const message = expectFailure(result, 1, 'validation_failed')
          expect(message).toContain('employees:write')
          expectFailure(
            await run('api-key', 'create', '--tenant', tenantId, '--scopes', ',', '--json'),
            1,
            'validation_failed',
          )
        })

        it('refuses a rate limit out of range, and an unknown tenant', async () => {
          expectFailure(await createKey('--rate-limit', '0'), 1, 'validation_failed')
          expectFailure(await createKey('--rate-limit', '100001'), 1, 'validation_failed')
          expectFailure(await createKey('--rate-limit', 'lots'), 2, 'usage')
          expectFailure(
            await run(
              'api-key',
              'create',
              '--tenant',
              'ten_00000000000000000000000000',
              '--scopes',
              'employees:read',
              '--json',
            ),
            1,
            'tenant_not_found',
          )
        })

        it('is a usage error (exit 2) without --tenant or --scopes', async () => {
          expectFailure(await run('api-key', 'create', '--scopes', 'employees:read', '--json'), 2, 'usage')
          expectFailure(await run('api-key', 'create', '--tenant', tenantId, '--json'), 2, 'usage')
        })
      })
    },
  )
}

describe('hajri-cloud CLI usage', () => {
  let workDir: string
  let dropDatabase: () => Promise<void>
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'hajri-cli-'))
    const target = await createTestDatabaseUrl('sqlite')
    dropDatabase = target.drop
    env = { HAJRI_DATABASE_URL: target.url }
  })
  afterAll(async () => {
    await dropDatabase()
    await rm(workDir, { recursive: true, force: true })
  })

  it('prints the usage for --help and for no command, and succeeds', async () => {
    for (const argv of [['--help'], ['-h'], []]) {
      const result = await cli(env, workDir, ...argv)
      expect(result.code, argv.join(' ')).toBe(0)
      expect(result.stdout).toBe(`${USAGE}\n`)
    }
  })

  it('is a usage error (exit 2, usage on stderr) for an unknown command, option or argument', async () => {
    for (const argv of [
      ['frobnicate'],
      ['tenant', 'delete'],
      ['tenant'],
      ['migrate', 'now'],
      ['migrate', '--bogus'],
      ['tenant', 'create', '--name'],
    ]) {
      const result = await cli(env, workDir, ...argv)
      expect(result.code, argv.join(' ')).toBe(2)
      expect(result.stderr).toContain('Usage:')
      expect(result.stdout).toBe('')
    }
  })

  it('refuses an option the command does not take (exit 2), though another command takes it', async () => {
    for (const argv of [
      ['migrate', '--tenant', 'ten_1'],
      ['api-key', 'list', '--tenant', 'ten_1', '--scopes', 'employees:read'],
      ['webhook', 'pause', 'whk_1', '--tenant', 'ten_1', '--grace', '1h'],
    ]) {
      const result = await cli(env, workDir, ...argv, '--json')
      expect(expectFailure(result, 2, 'usage'), argv.join(' ')).toContain(`'${argv.at(-2)}'`)
    }
  })

  it('lists each command once in the usage, naming its operand and exactly the options it takes', () => {
    const names = COMMANDS.map((c) => c.name)
    expect(new Set(names).size).toBe(names.length)
    for (const { name, usage = '', operand, options } of COMMANDS) {
      const [group = '', verb] = name.split(' ')
      expect(USAGE, name).toMatch(verb ? new RegExp(`hajri-cloud ${group} ([a-z-]+\\|)*${verb}\\b`) : name)
      expect([...usage.matchAll(/--([a-z-]+)/g)].map((m) => m[1]).sort(), name).toEqual([...options].sort())
      if (operand) expect(usage.split(/\s+/), name).toContain(operand.name)
    }
  })

  it('reports a usage error as JSON on stdout with --json', async () => {
    const result = await cli(env, workDir, 'frobnicate', '--json')
    expect(result.code).toBe(2)
    expect(result.json()).toEqual({
      error: { code: 'usage', message: expect.stringContaining('frobnicate') },
    })
  })

  it('is a configuration error (exit 2) for a wrong environment, naming each wrong variable', async () => {
    const result = await cli(
      { HAJRI_DATABASE_URL: 'mysql://db/hajri', HAJRI_LOG_LEVEL: 'loud' },
      workDir,
      'migrate',
      '--json',
    )
    const message = expectFailure(result, 2, 'invalid_configuration')
    expect(message).toContain('HAJRI_DATABASE_URL')
    expect(message).toContain('HAJRI_LOG_LEVEL')
  })

  it('reads a relative SQLite path against its working directory', async () => {
    const result = await cli(
      { HAJRI_DATABASE_URL: 'sqlite:./nested/dir/hajri.db' },
      workDir,
      'migrate',
      '--json',
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.json().database).toBe(`sqlite:${join(workDir, 'nested/dir/hajri.db')}`)
  })
})

describe('hajri-cloud serve (a real process)', () => {
  let child: ChildProcess | undefined
  let dropDatabase: (() => Promise<void>) | undefined

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
    child = undefined
    await dropDatabase?.()
  })

  it('listens, answers /healthz, serves its metrics apart, and exits 0 on SIGTERM', async () => {
    const target = await createTestDatabaseUrl('sqlite')
    dropDatabase = target.drop
    const metricsPort = await freePort()
    const server = spawn(process.execPath, ['--import', 'tsx', 'cloud/cli.ts', 'serve'], {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HAJRI_DATABASE_URL: target.url,
        HAJRI_HOST: '127.0.0.1',
        HAJRI_PORT: '0',
        HAJRI_LOG_LEVEL: 'info',
        HAJRI_METRICS_PORT: String(metricsPort),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child = server
    let stderr = ''
    server.stderr?.on('data', (chunk) => {
      stderr += String(chunk)
    })
    const logs: Record<string, unknown>[] = []
    const exited = once(server, 'close') as Promise<[number | null, NodeJS.Signals | null]>

    // pino writes one JSON object per line; Fastify logs the address it bound.
    const url = await new Promise<string>((resolveUrl, reject) => {
      const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream })
      lines.on('line', (line) => {
        let entry: Record<string, unknown>
        try {
          entry = JSON.parse(line)
        } catch {
          return
        }
        logs.push(entry)
        const m = /Server listening at (http:\/\/\S+)/.exec(String(entry.msg))
        if (m?.[1]) resolveUrl(m[1])
      })
      void exited.then(([code]) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)))
    })

    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const health = await fetch(`${url}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect(health.headers.get('x-request-id')).toMatch(/^req_/)
    const ready = await fetch(`${url}/readyz`)
    expect(ready.status).toBe(200)
    expect(logs.some((l) => l.msg === 'migrations applied')).toBe(true)

    // The metrics on their own port, on loopback; the API's port has none.
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`
    expect(logs.find((l) => l.msg === 'metrics listening')?.url).toBe(metricsUrl)
    const scraped = await fetch(metricsUrl)
    expect(scraped.status).toBe(200)
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await scraped.text()
    expect(text).toMatch(
      /^hajri_cloud_http_request_duration_seconds_count\{method="GET",route="\/readyz",status_code="200"\} 1$/m,
    )
    expect(text).toContain('# TYPE hajri_cloud_nodejs_eventloop_lag_p99_seconds gauge')
    // The readiness check's query, timed.
    expect(text).toMatch(/^hajri_cloud_db_query_duration_seconds_count\{database="sqlite"\} [1-9]\d*$/m)
    expect((await fetch(`${url}/metrics`)).status).toBe(404)

    server.kill('SIGTERM')
    const [code, signal] = await exited
    expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' })
    expect(logs.some((l) => l.msg === 'stopping' && l.signal === 'SIGTERM')).toBe(true)
  })
})
