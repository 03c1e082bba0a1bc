/**
 * What the agent durability tests share (MQTT and serial in agent-durability.test.ts, push
 * terminals in agent-adms-durability.test.ts): a real cloud on a port, a tenant of its own per test
 * with its employees and the agent's OAuth app, the tenant's raw punch log read from the database,
 * a TCP proxy in front of the cloud that can cut it off, and temporary directories. Every cleanup
 * runs after each test, whether it passed or not. Not a test file itself.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../../cloud/features/bearer-auth/credential-settings.js'
import { type DatabaseKind, employee, TEST_ACTOR, TestCloud } from '../../support/cloud-harness.js'
import { freePort, TcpProxy } from '../../support/e2e-kit.js'

export type StoredPunch = Awaited<ReturnType<DurabilityRig['storedPunches']>>[number]

export class DurabilityRig {
  readonly cloud: TestCloud
  private cloudPort = 0
  /** Run in reverse after each test. */
  readonly cleanups: (() => Promise<unknown>)[] = []

  /** Registers the suite's hooks: call it in a `describe`. */
  constructor(database: DatabaseKind) {
    this.cloud = new TestCloud(database)
    beforeAll(async () => {
      await this.cloud.start()
      await this.cloud.app.listen({ host: '127.0.0.1', port: 0 })
      this.cloudPort = (this.cloud.app.server.address() as AddressInfo).port
    })
    afterEach(async () => {
      const errors: unknown[] = []
      for (const cleanup of this.cleanups.splice(0).reverse())
        await cleanup().catch((err) => errors.push(err))
      if (errors.length > 0) console.warn('cleanup problems:', errors)
    })
    afterAll(async () => {
      await this.cloud.stop()
    })
  }

  /** A tenant of its own, with its employees and the agent's OAuth app (attendance:write). */
  async setUpTenant(codes: readonly string[], appName = 'hajri-agent e2e') {
    const tenantId = await this.cloud.createTenant({ backfillDays: 30 })
    await this.cloud.upsertEmployees(
      tenantId,
      codes.map((code) => employee(code)),
    )
    const app = await this.cloud.services.oauthApps.create(
      tenantId,
      { name: appName, scopes: ['attendance:write'], rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
      TEST_ACTOR,
    )
    return { tenantId, clientId: app.clientId, clientSecret: app.clientSecret }
  }

  /** The tenant's raw punch log, straight from the database. */
  storedPunches(tenantId: string) {
    return this.cloud.database.db
      .selectFrom('punches')
      .select(['external_id', 'employee_code', 'punched_at', 'punch_type', 'device_id'])
      .where('tenant_id', '=', tenantId)
      .execute()
  }

  /** A proxy to the cloud on a fixed port of its own, listened on again after a 'refuse' outage. */
  async startProxy(): Promise<TcpProxy> {
    const proxy = new TcpProxy({ host: '127.0.0.1', port: this.cloudPort })
    await proxy.listen(await freePort())
    this.cleanups.push(() => proxy.close())
    return proxy
  }

  /** Removed after the test, unless HAJRI_E2E_KEEP=1 (to read agent.log and the spool after a failure). */
  async tempDir(prefix = 'hajri-e2e-'): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    if (process.env.HAJRI_E2E_KEEP === '1') console.warn(`HAJRI_E2E_KEEP=1: keeping ${dir}`)
    else this.cleanups.push(() => rm(dir, { recursive: true, force: true }))
    return dir
  }
}
