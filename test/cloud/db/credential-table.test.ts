/**
 * The generic credential table, through the stores that use it, on both databases: every
 * statement stays within the tenant it is given, and revocation happens once.
 */
import { expect, it } from 'vitest'
import { AdminTokenStore } from '../../../cloud/features/admin-tokens/store.js'
import { ApiKeyStore } from '../../../cloud/features/api-keys/store.js'
import { newId } from '../../../shared/ids.js'
import { describeEachDatabase } from '../../support/cloud-harness.js'

const NOW = 1_750_000_000_000_000

function apiKeyRow(hash: string) {
  return {
    id: newId('apiKey'),
    name: 'sync',
    key_hash: hash,
    key_prefix: 'hjk_test',
    scopes: 'employees:read',
    rate_limit_per_minute: 600,
    expires_at: NOW + 3_600_000_000,
    created_at: NOW,
    revoked_at: null,
    last_used_at: null,
  }
}

describeEachDatabase('CredentialTable', (cloud) => {
  it('inserts, lists, gets and revokes within one tenant only', async () => {
    const [a, b] = [await cloud.createTenant(), await cloud.createTenant()]
    const store = new ApiKeyStore(cloud.database.db)
    const row = apiKeyRow(`hash-${newId('apiKey')}`)
    await store.insert(a, row)

    expect(await store.get(a, row.id)).toEqual({ ...row, tenant_id: a })
    expect(await store.get(b, row.id)).toBeUndefined()
    expect((await store.list(a)).map((r) => r.id)).toContain(row.id)
    expect((await store.list(b)).map((r) => r.id)).not.toContain(row.id)

    expect(await store.revoke(b, row.id, NOW)).toBe(false)
    expect((await store.get(a, row.id))?.revoked_at).toBeNull()
    expect(await store.revoke(a, row.id, NOW)).toBe(true)
    expect(await store.revoke(a, row.id, NOW + 1)).toBe(false)
    expect((await store.get(a, row.id))?.revoked_at).toBe(NOW)
  })

  it('finds a credential by its hash, with its tenant, and nothing for an unknown hash', async () => {
    const tenantId = await cloud.createTenant({ timeZone: 'Asia/Dubai', backfillDays: 3 })
    const keys = new ApiKeyStore(cloud.database.db)
    const hash = `hash-${newId('apiKey')}`
    const row = apiKeyRow(hash)
    await keys.insert(tenantId, row)
    expect(await keys.findByHashForAuthentication(hash)).toEqual({
      ...row,
      tenant_id: tenantId,
      time_zone: 'Asia/Dubai',
      backfill_days: 3,
    })
    expect(await keys.findByHashForAuthentication('no-such-hash')).toBeUndefined()

    const tokens = new AdminTokenStore(cloud.database.db)
    const token = {
      id: newId('adminToken'),
      name: 'ops',
      token_hash: `hash-${newId('adminToken')}`,
      created_at: NOW,
      expires_at: NOW + 1,
      revoked_at: null,
    }
    await tokens.insert(tenantId, token)
    expect(await tokens.findByHashForAuthentication(token.token_hash)).toMatchObject({
      id: token.id,
      time_zone: 'Asia/Dubai',
    })
    // The same hash in the other table is not a token: each lookup reads its own table.
    expect(await tokens.findByHashForAuthentication(hash)).toBeUndefined()
  })
})
