/**
 * The demo's seed (`npm start`, docs/decisions/0059-npm-start-is-a-demo.md): what the first run makes, that
 * later runs reuse it, and that a run stopped between two steps, or a lost file, or a deleted database, never
 * leaves the next run failing: it completes or starts over. On SQLite and PostgreSQL: the seed goes through
 * the services, which both run.
 */
import { describe, expect, it } from 'vitest'
import type { DemoCredentials } from '../../../cloud/demo/demo-credentials.js'
import { DEMO_EMPLOYEES } from '../../../cloud/demo/demo-employees.js'
import {
  DEMO_AGENT_APP_NAME,
  DEMO_OWNER_EMAIL,
  DEMO_TENANT_NAME,
  type DemoSeed,
  seedDemo,
} from '../../../cloud/demo/demo-seed.js'
import { hashPassword } from '../../../cloud/features/users/password.js'
import { ConsoleUserStore } from '../../../cloud/features/users/store.js'
import { bearer, type DatabaseKind, TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { postgresAvailability } from '../../support/services.js'

const postgres = await postgresAvailability()

/** A stand-in for demo-credentials.json: what was saved, and a way to fail a save (a crash there). */
class CredentialsFile {
  saved: DemoCredentials | undefined
  saves = 0
  /** The save with this number (1-based) throws, as if the process died before the file was written. */
  failAt: number | undefined

  readonly save = async (credentials: DemoCredentials): Promise<void> => {
    this.saves++
    if (this.saves === this.failAt) throw new Error('crash before the file was written')
    this.saved = structuredClone(credentials)
  }
}

async function withCloud(kind: DatabaseKind, work: (cloud: TestCloud) => Promise<void>): Promise<void> {
  const cloud = new TestCloud(kind)
  await cloud.start()
  try {
    await work(cloud)
  } finally {
    await cloud.stop()
  }
}

function seed(cloud: TestCloud, file: CredentialsFile): Promise<DemoSeed> {
  return seedDemo(file.saved, {
    services: cloud.services,
    db: cloud.database.db,
    actor: TEST_ACTOR,
    save: file.save,
  })
}

async function tenantIds(cloud: TestCloud): Promise<string[]> {
  return (await cloud.database.db.selectFrom('tenants').select('id').execute()).map((t) => t.id)
}

/** The key lists the employees; the agent's client gets a token: both work against the app. */
async function expectCredentialsWork(cloud: TestCloud, credentials: DemoSeed['credentials']): Promise<void> {
  const employees = await cloud.app.inject({
    method: 'GET',
    url: '/api/public/v1/employees?limit=200',
    headers: bearer(credentials.apiKey.key),
  })
  expect(employees.statusCode).toBe(200)
  expect(
    employees
      .json()
      .data.map((e: { employeeCode: string }) => e.employeeCode)
      .sort(),
  ).toEqual(DEMO_EMPLOYEES.map((e) => e.employeeCode))
  const token = await cloud.app.inject({
    method: 'POST',
    url: '/api/oauth/token',
    payload: {
      grant_type: 'client_credentials',
      client_id: credentials.agent.clientId,
      client_secret: credentials.agent.clientSecret,
    },
  })
  expect(token.statusCode, token.body).toBe(200)
  expect(token.json().scope).toBe('attendance:write')
}

async function agentSecretWorks(cloud: TestCloud, agent: { clientId: string; clientSecret: string }) {
  return (await cloud.services.oauthApps.authenticateClient(agent.clientId, agent.clientSecret)) !== undefined
}

for (const kind of ['sqlite', 'postgres'] as const) {
  const skipReason = kind === 'postgres' ? postgres.skipReason : undefined
  describe.skipIf(skipReason !== undefined)(
    `demo seed [${kind}]${skipReason ? ` (skipped: ${skipReason})` : ''}`,
    () => {
      it('makes the tenant, its owner, 8 employees, a shift for everyone, the agent app and an API key, saving after each step', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const result = await seed(cloud, file)
          const { credentials } = result
          expect(credentials.tenant.name).toBe(DEMO_TENANT_NAME)
          expect(credentials.owner.email).toBe(DEMO_OWNER_EMAIL)
          expect(result.owner).toEqual({ kind: 'one-time', password: credentials.owner.oneTimePassword })
          expect(result.done).toHaveLength(5)
          expect(result.done).toContain('shift GEN assigned to everyone')
          const tenantId = credentials.tenant.id
          expect((await cloud.services.attendanceConfig.listShifts(tenantId)).data).toMatchObject([
            { code: 'GEN', start: '09:00', end: '18:00', unpaidBreakMinutes: 60 },
          ])
          expect((await cloud.services.attendanceConfig.listAssignments(tenantId)).data).toMatchObject([
            { employeeCode: null, group: null, shiftCode: 'GEN' },
          ])
          expect(file.saved).toEqual(credentials)
          // Tenant, then app, then key: each secret is on disk before the next step can fail.
          expect(file.saves).toBe(3)
          expect(await tenantIds(cloud)).toEqual([credentials.tenant.id])
          const apiKey = await cloud.services.apiKeys.get(credentials.tenant.id, credentials.apiKey.id)
          expect(apiKey).toMatchObject({
            name: 'Demo HR backend',
            scopes: ['employees:read', 'attendance:read', 'attendance:write', 'attendance:admin'],
            status: 'active',
          })
          const app = await cloud.services.oauthApps.get(credentials.tenant.id, credentials.agent.appId)
          expect(app).toMatchObject({ name: DEMO_AGENT_APP_NAME, scopes: ['attendance:write'] })
          await expectCredentialsWork(cloud, credentials)
        })
      })

      it('reuses everything on the next runs: nothing made, nothing saved, the same credentials', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const first = await seed(cloud, file)
          const savesBefore = file.saves
          for (let run = 0; run < 2; run++) {
            const again = await seed(cloud, file)
            expect(again.done).toEqual([])
            expect(again.credentials).toEqual(first.credentials)
            expect(again.owner).toEqual(first.owner)
          }
          expect(file.saves).toBe(savesBefore)
          expect(await tenantIds(cloud)).toEqual([first.credentials.tenant.id])
          expect(await cloud.services.oauthApps.list(first.credentials.tenant.id)).toHaveLength(1)
          expect(await cloud.services.apiKeys.list(first.credentials.tenant.id)).toHaveLength(1)
        })
      })

      it('keeps employees changed since (adds the sample ones only to a tenant that has none)', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const { credentials } = await seed(cloud, file)
          const [asha] = DEMO_EMPLOYEES
          await cloud.services.employees.upsert(credentials.tenant.id, [
            { ...(asha as (typeof DEMO_EMPLOYEES)[number]), name: 'Asha Patil-Kulkarni', status: 'INACTIVE' },
          ])
          await seed(cloud, file)
          const kept = await cloud.services.employees.get(credentials.tenant.id, 'E001')
          expect(kept).toMatchObject({ name: 'Asha Patil-Kulkarni', status: 'INACTIVE' })
        })
      })

      it('says when the owner has chosen a password, no longer showing the one-time one', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const { credentials } = await seed(cloud, file)
          const users = await cloud.services.consoleUsers.list(credentials.tenant.id, {})
          const owner = users.data.find((u) => u.email === DEMO_OWNER_EMAIL)
          expect(owner?.mustChangePassword).toBe(true)
          // What the first sign-in's password change stores.
          await new ConsoleUserStore(cloud.database.db).setPassword(
            credentials.tenant.id,
            owner?.id as string,
            await hashPassword('a password of my own'),
            false,
          )
          expect((await seed(cloud, file)).owner).toEqual({ kind: 'chosen' })
        })
      })

      it('does not show the kept one-time password once an operator has reset it', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const { credentials } = await seed(cloud, file)
          await cloud.services.consoleUsers.resetPassword(credentials.tenant.id, DEMO_OWNER_EMAIL, TEST_ACTOR)
          expect((await seed(cloud, file)).owner).toEqual({ kind: 'unknown' })
        })
      })

      it('completes a run stopped after the tenant was saved: the same tenant, an app and a key added', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          file.failAt = 2 // the save after the OAuth app: the app exists, its secret is lost
          await expect(seed(cloud, file)).rejects.toThrow('crash')
          const tenantId = file.saved?.tenant.id as string
          expect(file.saved?.agent).toBeUndefined()
          const [orphan] = await cloud.services.oauthApps.list(tenantId)
          expect(orphan?.name).toBe(DEMO_AGENT_APP_NAME)

          const resumed = await seed(cloud, file)
          expect(resumed.credentials.tenant.id).toBe(tenantId)
          expect(resumed.done).toEqual([
            `OAuth app ${orphan?.id}: new client secret`,
            `API key ${resumed.credentials.apiKey.id} created`,
          ])
          // The same app, with a secret we know; no second app, no second set of employees.
          expect((await cloud.services.oauthApps.list(tenantId)).map((a) => a.id)).toEqual([orphan?.id])
          expect((await cloud.services.employees.list(tenantId, { limit: 200 })).data).toHaveLength(8)
          expect(await tenantIds(cloud)).toEqual([tenantId])
          expect(file.saved).toEqual(resumed.credentials)
          await expectCredentialsWork(cloud, resumed.credentials)
        })
      })

      it('finds the tenant by its owner when the file was never written (or deleted): new one-time password', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          file.failAt = 1 // the tenant exists, nothing was saved
          await expect(seed(cloud, file)).rejects.toThrow('crash')
          expect(file.saved).toBeUndefined()
          const [tenantId] = await tenantIds(cloud)

          const recovered = await seed(cloud, file)
          expect(recovered.credentials.tenant.id).toBe(tenantId)
          expect(recovered.done[0]).toBe(
            `tenant ${tenantId} found by its owner's email; owner password reset`,
          )
          expect(recovered.owner).toEqual({
            kind: 'one-time',
            password: recovered.credentials.owner.oneTimePassword,
          })
          expect(await tenantIds(cloud)).toEqual([tenantId])
          await expectCredentialsWork(cloud, recovered.credentials)

          // The file deleted after a complete run: the same tenant again, the old agent secret replaced.
          const before = recovered.credentials
          file.saved = undefined
          const again = await seed(cloud, file)
          expect(again.credentials.tenant.id).toBe(tenantId)
          expect(again.credentials.agent.appId).toBe(before.agent.appId)
          expect(await agentSecretWorks(cloud, before.agent)).toBe(false)
          await expectCredentialsWork(cloud, again.credentials)
        })
      })

      it('replaces a revoked key and a rotated agent secret', async () => {
        await withCloud(kind, async (cloud) => {
          const file = new CredentialsFile()
          const { credentials } = await seed(cloud, file)
          await cloud.services.apiKeys.revoke(credentials.tenant.id, credentials.apiKey.id, TEST_ACTOR)
          await cloud.services.oauthApps.rotateSecret(
            credentials.tenant.id,
            credentials.agent.appId,
            TEST_ACTOR,
            0,
          )
          const again = await seed(cloud, file)
          expect(again.credentials.apiKey.id).not.toBe(credentials.apiKey.id)
          expect(again.credentials.agent.appId).toBe(credentials.agent.appId)
          expect(again.credentials.agent.clientSecret).not.toBe(credentials.agent.clientSecret)
          await expectCredentialsWork(cloud, again.credentials)
        })
      })
    },
  )
}

describe('demo seed after the database was deleted', () => {
  it('seeds a new tenant and replaces the credentials of the one that is gone', async () => {
    const file = new CredentialsFile()
    let old: DemoSeed['credentials'] | undefined
    await withCloud('sqlite', async (cloud) => {
      old = (await seed(cloud, file)).credentials
    })
    // A new database (the old file deleted), the credentials file still there.
    await withCloud('sqlite', async (cloud) => {
      const fresh = await seed(cloud, file)
      expect(fresh.credentials.tenant.id).not.toBe(old?.tenant.id)
      expect(fresh.done[0]).toBe(`tenant ${fresh.credentials.tenant.id} created`)
      expect(fresh.credentials.apiKey.key).not.toBe(old?.apiKey.key)
      expect(file.saved).toEqual(fresh.credentials)
      expect(await tenantIds(cloud)).toEqual([fresh.credentials.tenant.id])
      await expectCredentialsWork(cloud, fresh.credentials)
    })
  })
})
