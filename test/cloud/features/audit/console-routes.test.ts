import { afterEach, beforeAll, expect, it } from 'vitest'
import type { AuditEntry } from '../../../../shared/audit.js'
import { formatTimestamp, nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase } from '../../../support/cloud-harness.js'
import { adminConsole, type ConsoleApi, listAll, viewerConsole } from '../../console-kit.js'

// The console API: the audit log, newest first, filtered by action, actor, target and
// time, with cursor paging.

const SECOND = 1_000_000

describeEachDatabase('the audit log in the console API', (cloud) => {
  let first: ConsoleApi
  let second: ConsoleApi
  let keyId: string
  let appId: string
  const at: number[] = []

  // One tenant, two admins, five acts one second apart; and a neighbour with its own.
  beforeAll(async () => {
    const tenantId = await cloud.createTenant()
    first = await adminConsole(cloud, tenantId)
    second = await adminConsole(cloud, tenantId)
    const start = nowMicros() - 60 * SECOND
    const step = async (n: number, act: () => Promise<{ statusCode: number; json(): { id?: string } }>) => {
      at[n] = start + n * SECOND
      cloud.fixedNow = at[n]
      const res = await act()
      expect(res.statusCode).toBeLessThan(300)
      return res.json()
    }
    keyId = (await step(0, () => first.post('/api-keys', { scopes: ['employees:read'] }))).id as string
    appId = (await step(1, () => first.post('/oauth-apps', { name: 'agent', scopes: ['attendance:write'] })))
      .id as string
    await step(2, () => second.post(`/oauth-apps/${appId}/rotate-secret`, { graceSeconds: 0 }))
    await step(3, () => second.post(`/api-keys/${keyId}/revoke`))
    await step(4, () => first.post(`/oauth-apps/${appId}/revoke`))
    cloud.fixedNow = undefined
    const neighbour = await adminConsole(cloud, await cloud.createTenant())
    expect((await neighbour.post('/api-keys', { scopes: ['employees:read'] })).statusCode).toBe(201)
  })
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const entries = (query: Record<string, string> = {}, api = first) =>
    listAll<AuditEntry>(api, '/audit', query)
  const summary = (list: AuditEntry[]) => list.map((e) => `${e.action} ${e.target.id} ${e.actor}`)
  const time = (n: number) => formatTimestamp(at[n] as number, 330)

  it('lists the tenant’s entries newest first, each with actor, time, target and address', async () => {
    const all = await entries()
    // The two admin tokens' creation is the harness's doing, also logged.
    expect(summary(all.filter((e) => e.actor !== 'test:harness'))).toEqual([
      `oauth_app.revoked ${appId} ${first.actor}`,
      `api_key.revoked ${keyId} ${second.actor}`,
      `oauth_app.secret_rotated ${appId} ${second.actor}`,
      `oauth_app.created ${appId} ${first.actor}`,
      `api_key.created ${keyId} ${first.actor}`,
    ])
    expect(all.every((e) => e.ip === '127.0.0.1' || e.actor === 'test:harness')).toBe(true)
    expect(all.map((e) => e.id)).toEqual(
      all
        .map((e) => e.id)
        .sort()
        .reverse(),
    )
  })

  it('filters by action, actor, target type, target id and time, alone and together', async () => {
    expect(summary(await entries({ action: 'api_key.created' }))).toEqual([
      `api_key.created ${keyId} ${first.actor}`,
    ])
    expect(summary(await entries({ actor: second.actor }))).toEqual([
      `api_key.revoked ${keyId} ${second.actor}`,
      `oauth_app.secret_rotated ${appId} ${second.actor}`,
    ])
    expect((await entries({ targetType: 'oauth_app' })).map((e) => e.action)).toEqual([
      'oauth_app.revoked',
      'oauth_app.secret_rotated',
      'oauth_app.created',
    ])
    expect((await entries({ targetId: keyId })).map((e) => e.action)).toEqual([
      'api_key.revoked',
      'api_key.created',
    ])
    // `from` inclusive, `to` exclusive, in any offset.
    expect((await entries({ from: time(1), to: time(4) })).map((e) => e.action)).toEqual([
      'api_key.revoked',
      'oauth_app.secret_rotated',
      'oauth_app.created',
    ])
    expect(summary(await entries({ actor: first.actor, targetType: 'oauth_app', from: time(2) }))).toEqual([
      `oauth_app.revoked ${appId} ${first.actor}`,
    ])
    expect(await entries({ action: 'webhook_endpoint.created' })).toEqual([])
    expect(await entries({ actor: 'admin_token:adm_nobody' })).toEqual([])
  })

  it('pages a filtered log with a cursor that keeps its filters, and refuses it with others', async () => {
    const query = { targetType: 'oauth_app' }
    const all = await entries(query)
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const params = new URLSearchParams({ ...query, limit: '1', ...(cursor ? { cursor } : {}) })
      const res = await first.get(`/audit?${params}`)
      expect(res.statusCode, res.body).toBe(200)
      seen.push(...res.json().data.map((e: AuditEntry) => e.id))
      cursor = res.json().nextCursor
      if (cursor) {
        const other = await first.get(`/audit?targetType=api_key&cursor=${cursor}`)
        expect(other.statusCode).toBe(400)
        expect(other.json().code).toBe('invalid_cursor')
        const bare = await first.get(`/audit?limit=200&cursor=${cursor}`)
        expect(bare.json().data.every((e: AuditEntry) => e.target.type === 'oauth_app')).toBe(true)
      }
    } while (cursor !== null)
    expect(seen).toEqual(all.map((e) => e.id))
    const forged = Buffer.from(JSON.stringify({ beforeId: 'aud_\u0000', actor: 'x' })).toString('base64url')
    expect((await first.get(`/audit?cursor=${forged}`)).json().code).toBe('invalid_cursor')
  })

  it('refuses filters that cannot match anything the log holds, with the field at fault', async () => {
    for (const [query, pointer] of [
      ['action=api_key.deleted', '#/action'],
      ['targetType=API_KEY', '#/targetType'],
      ['from=2026-01-01T00:00:00', '#/from'],
      ['to=yesterday', '#/to'],
      [`actor=${encodeURIComponent('admin\u0000')}`, '#/actor'],
      [`targetId=${'x'.repeat(201)}`, '#/targetId'],
      ['limit=0', '#/limit'],
    ]) {
      const res = await first.get(`/audit?${query}`)
      expect(res.statusCode, query).toBe(400)
      expect(
        res.json().errors.map((e: { pointer: string }) => e.pointer),
        query,
      ).toContain(pointer)
    }
  })

  it('lets a viewer read the log', async () => {
    const viewer = await viewerConsole(cloud, first.tenantId)
    expect(await entries({ targetId: appId }, viewer)).toEqual(await entries({ targetId: appId }))
  })
})
