import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LiveCredentialCheck } from '../../../../cloud/auth/auth-context.js'
import { Stores } from '../../../../cloud/stores.js'
import { newId } from '../../../../shared/ids.js'
import { nowMicros } from '../../../../shared/time.js'
import { employee, TEST_ACTOR, TestCloud } from '../../../support/cloud-harness.js'

/**
 * PunchStore.insertNewFromEmployee, SQLite's single punch, on a real database: it inserts only for an
 * active employee of the tenant and a new externalId, and, given a cached credential, only while
 * that credential is live and its tenant's settings unchanged
 * (docs/decisions/0093-sqlite-single-punch-checks-its-credential.md).
 */
describe('PunchStore.insertNewFromEmployee (SQLite)', () => {
  const cloud = new TestCloud('sqlite')
  let tenantId: string
  let otherTenantId: string
  beforeAll(async () => {
    await cloud.start()
    tenantId = await cloud.createTenant({ timeZone: 'Asia/Kolkata', backfillDays: 7 })
    otherTenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001'), employee('E002', { status: 'INACTIVE' })])
    await cloud.upsertEmployees(otherTenantId, [employee('X001')])
  })
  afterAll(() => cloud.stop())

  const row = (employeeCode: string, externalId: string | null) => {
    const now = nowMicros()
    return {
      id: newId('punch'),
      employee_code: employeeCode,
      punch_type: 'IN',
      punched_at: now - 60_000_000,
      received_at: now,
      device_id: 'gate-1',
      source: null,
      external_id: externalId,
      fingerprint: `fp-${externalId}`,
    }
  }
  const insert = (r: ReturnType<typeof row>, credential?: LiveCredentialCheck & { now: number }) =>
    cloud.database.transact((trx) => new Stores(trx).punches.insertNewFromEmployee(tenantId, r, credential))
  const stored = (id: string) =>
    cloud.database.db.selectFrom('punches').selectAll().where('id', '=', id).executeTakeFirst()
  const employeeId = async (tenant: string, code: string) =>
    (
      await cloud.database.db
        .selectFrom('employees')
        .select('id')
        .where('tenant_id', '=', tenant)
        .where('employee_code', '=', code)
        .executeTakeFirstOrThrow()
    ).id

  it("inserts a new punch with its employee's id, scoped to the tenant", async () => {
    const r = row('E001', 'from-employee-1')
    expect(await insert(r)).toBe(true)
    expect(await stored(r.id)).toMatchObject({
      ...r,
      tenant_id: tenantId,
      employee_id: await employeeId(tenantId, 'E001'),
    })
  })

  it("inserts nothing for a stored externalId, an inactive or unknown employee, or another tenant's", async () => {
    await insert(row('E001', 'taken'))
    for (const r of [
      row('E001', 'taken'),
      row('E002', 'inactive'),
      row('E404', 'unknown'),
      row('X001', 'x'),
    ]) {
      expect(await insert(r), r.employee_code).toBe(false)
      expect(await stored(r.id), r.employee_code).toBeUndefined()
    }
    // Without an externalId nothing collides: each is a punch of its own.
    expect(await insert(row('E001', null))).toBe(true)
    expect(await insert(row('E001', null))).toBe(true)
  })

  describe('with a cached credential', () => {
    const check = (
      kind: LiveCredentialCheck['kind'],
      id: string,
      extra: Partial<LiveCredentialCheck & { now: number }> = {},
    ) => ({
      kind,
      id,
      timeZone: 'Asia/Kolkata',
      backfillDays: 7,
      now: nowMicros(),
      ...extra,
    })

    it('inserts while an API key is live, and not once it is revoked, expired, or its tenant changed', async () => {
      const key = await cloud.services.apiKeys.create(tenantId, { scopes: ['attendance:write'] }, TEST_ACTOR)
      expect(await insert(row('E001', 'live-key'), check('api_key', key.id))).toBe(true)
      const refusals: [string, ReturnType<typeof check>][] = [
        ['expired', check('api_key', key.id, { now: nowMicros() + 3 * 366 * 86_400_000_000 })],
        ['time zone', check('api_key', key.id, { timeZone: 'Asia/Dubai' })],
        ['backfill', check('api_key', key.id, { backfillDays: 30 })],
        [
          'another tenant',
          check(
            'api_key',
            (await cloud.services.apiKeys.create(otherTenantId, { scopes: ['attendance:write'] }, TEST_ACTOR))
              .id,
          ),
        ],
        ['a token id', check('oauth_token', key.id)],
      ]
      for (const [why, credential] of refusals) {
        const r = row('E001', `refused-${why}`)
        expect(await insert(r, credential), why).toBe(false)
        expect(await stored(r.id), why).toBeUndefined()
      }
      await cloud.services.apiKeys.revoke(tenantId, key.id, TEST_ACTOR)
      const r = row('E001', 'revoked-key')
      expect(await insert(r, check('api_key', key.id))).toBe(false)
      expect(await stored(r.id)).toBeUndefined()
    })

    it('inserts while an access token and its app are live, and not once the app is revoked', async () => {
      const app = await cloud.services.oauthApps.create(
        tenantId,
        { name: 'from-employee', scopes: ['attendance:write'] },
        TEST_ACTOR,
      )
      const client = await cloud.services.oauthApps.authenticateClient(app.clientId, app.clientSecret)
      if (!client) throw new Error('the client does not authenticate')
      await cloud.services.tokens.issue(client, undefined, null)
      const tokenId = (
        await cloud.database.db
          .selectFrom('oauth_tokens')
          .select('id')
          .where('app_id', '=', app.id)
          .executeTakeFirstOrThrow()
      ).id
      expect(await insert(row('E001', 'live-token'), check('oauth_token', tokenId))).toBe(true)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      const r = row('E001', 'revoked-app')
      expect(await insert(r, check('oauth_token', tokenId))).toBe(false)
      expect(await stored(r.id)).toBeUndefined()
    })
  })
})
