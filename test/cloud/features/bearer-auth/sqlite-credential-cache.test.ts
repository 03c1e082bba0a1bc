import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { openDatabase } from '../../../../cloud/db/database.js'
import { createServices } from '../../../../cloud/services.js'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import { bearer, employee, TEST_ACTOR, TEST_SECRET_KEY, TestCloud } from '../../../support/cloud-harness.js'

const EMPLOYEES = '/api/public/v1/employees'
const TOKEN = '/api/oauth/token'
const SECOND = 1_000_000

/**
 * On SQLite every route answers from cached credential lookups while the database says no
 * credential changed (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md). A
 * revocation, by this process or by another connection to the file (the CLI's), is refused on the
 * next request all the same.
 */
describe('the credential cache on SQLite', () => {
  const cloud = new TestCloud('sqlite')
  let tenantId: string
  beforeAll(async () => {
    await cloud.start()
    tenantId = await cloud.createTenant()
  })
  afterAll(() => cloud.stop())
  afterEach(() => {
    cloud.fixedNow = undefined
    vi.restoreAllMocks()
  })

  const read = (token: string) => cloud.app.inject({ method: 'GET', url: EMPLOYEES, headers: bearer(token) })
  const newKey = (expiresInSeconds?: number) =>
    cloud.services.apiKeys.create(
      tenantId,
      { scopes: ['employees:read'], ...(expiresInSeconds ? { expiresInSeconds } : {}) },
      TEST_ACTOR,
    )
  /** Services over a connection of their own to the same file: what another process does. */
  async function elsewhere<T>(act: (services: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
    const handle = openDatabase(cloud.databaseUrl, { secretKey: TEST_SECRET_KEY })
    try {
      return await act(createServices(handle))
    } finally {
      await handle.close()
    }
  }
  /** Reads with the key until one is answered without a lookup: the key is then in the cache. */
  async function cached(key: string) {
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    for (let i = 0; i < 3; i++) expect((await read(key)).statusCode).toBe(200)
    // The first lookup records the key's first use: bookkeeping, not a change, so the lookup is kept.
    expect(lookups).toHaveBeenCalledTimes(1)
    lookups.mockRestore()
  }

  it('answers reads from the cache while no credential changes', async () => {
    const { key } = await newKey()
    await cached(key)
  })

  it("keeps its lookups through a key's recorded uses and the tenant's directory changes", async () => {
    const { id, key } = await newKey()
    await cached(key)
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    // Each moves the tenant's last change time (an UPDATE of tenants), which no lookup acts on.
    await cloud.upsertEmployees(tenantId, [employee('C001')])
    expect((await read(key)).statusCode).toBe(200)
    await cloud.upsertEmployees(tenantId, [employee('C001', { name: 'Renamed' })])
    expect((await read(key)).statusCode).toBe(200)
    expect(lookups).not.toHaveBeenCalled()
    // A minute on, the key's use is due to be recorded: looked up, recorded, and cached again.
    const later = nowMicros() + 61 * SECOND
    cloud.fixedNow = later
    for (let i = 0; i < 2; i++) expect((await read(key)).statusCode).toBe(200)
    expect(lookups).toHaveBeenCalledTimes(1)
    const stored = (await cloud.services.apiKeys.list(tenantId)).find((k) => k.id === id)
    expect(stored?.lastUsedAt).toBe(formatServerTime(later))
  })

  it("looks a cached key up again once its tenant's settings change", async () => {
    const { key } = await newKey()
    await cached(key)
    const lookups = vi.spyOn(cloud.services.apiKeys, 'authenticate')
    await cloud.database.db
      .updateTable('tenants')
      .set({ backfill_days: 3 })
      .where('id', '=', tenantId)
      .execute()
    expect((await read(key)).statusCode).toBe(200)
    expect(lookups).toHaveBeenCalledTimes(1)
  })

  it('refuses a cached key on the next request once this process revokes it', async () => {
    const { id, key } = await newKey()
    await cached(key)
    await cloud.services.apiKeys.revoke(tenantId, id, TEST_ACTOR)
    expect((await read(key)).statusCode).toBe(401)
  })

  it('refuses a cached key on the next request once another connection revokes it', async () => {
    const { id, key } = await newKey()
    await cached(key)
    await elsewhere((services) => services.apiKeys.revoke(tenantId, id, TEST_ACTOR))
    const next = await read(key)
    expect(next.statusCode).toBe(401)
    expect(next.json()).toMatchObject({ code: 'invalid_credential' })
  })

  it('refuses a cached access token on the next request once another connection revokes its app', async () => {
    const app = await cloud.services.oauthApps.create(
      tenantId,
      { name: 'HR sync', scopes: ['employees:read'] },
      TEST_ACTOR,
    )
    const issued = await cloud.app.inject({
      method: 'POST',
      url: TOKEN,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: app.clientId,
        client_secret: app.clientSecret,
      }).toString(),
    })
    expect(issued.statusCode, issued.body).toBe(200)
    const token = issued.json().access_token as string
    const lookups = vi.spyOn(cloud.services.tokens, 'authenticate')
    for (let i = 0; i < 2; i++) expect((await read(token)).statusCode).toBe(200)
    expect(lookups).toHaveBeenCalledTimes(1)
    await elsewhere((services) => services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR))
    expect((await read(token)).statusCode).toBe(401)
    expect(lookups).toHaveBeenCalledTimes(2)
  })

  it('refuses a cached key from the moment it expires', async () => {
    const t = nowMicros()
    cloud.fixedNow = t
    const { key } = await newKey(3600)
    // Looked up and kept with five seconds left, less than the cache's time.
    cloud.fixedNow = t + 3595 * SECOND
    await cached(key)
    cloud.fixedNow = t + 3600 * SECOND
    expect((await read(key)).statusCode).toBe(401)
  })
})
