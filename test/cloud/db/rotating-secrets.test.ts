/**
 * Rotating secrets, through the OAuth app store, on both databases: the current secret and those in
 * their grace work, within the tenant only.
 */
import { expect, it } from 'vitest'
import { OAuthAppStore } from '../../../cloud/features/oauth/app-store.js'
import { newId } from '../../../shared/ids.js'
import { describeEachDatabase } from '../../support/cloud-harness.js'

const NOW = 1_750_000_000_000_000

describeEachDatabase('RotatingSecrets', (cloud) => {
  it('keeps the current secret and those in their grace, within the tenant', async () => {
    const [a, b] = [await cloud.createTenant(), await cloud.createTenant()]
    const store = new OAuthAppStore(cloud.database.db)
    const appId = newId('oauthApp')
    await store.insert(a, {
      id: appId,
      name: 'payroll',
      client_id: `hjc_${appId}`,
      scopes: 'employees:read',
      rate_limit_per_minute: 600,
      created_at: NOW,
      revoked_at: null,
    })
    const secret = (expiresAt: number | null) => ({
      id: newId('clientSecret'),
      app_id: appId,
      secret_hash: `hash-${newId('clientSecret')}`,
      secret_prefix: 'hjs_test',
      created_at: NOW,
      expires_at: expiresAt,
    })
    const first = secret(null)
    await store.insertSecret(a, first)
    await store.expireSecrets(a, appId, NOW + 10)
    const second = secret(null)
    await store.insertSecret(a, second)

    const live = async (tenantId: string, at: number) =>
      (await store.liveSecrets(tenantId, [appId], at)).map((r) => r.id)
    expect(await live(a, NOW)).toEqual([first.id, second.id])
    expect(await live(a, NOW + 10)).toEqual([second.id])
    expect(await live(b, NOW)).toEqual([])
    expect(await store.liveSecrets(a, [], NOW)).toEqual([])

    // A second rotation ends the current secret, and never moves an earlier expiry later.
    await store.expireSecrets(a, appId, NOW + 20)
    expect(await live(a, NOW + 5)).toEqual([first.id, second.id])
    expect(await live(a, NOW + 15)).toEqual([second.id])
    expect(await live(a, NOW + 20)).toEqual([])
  })
})
