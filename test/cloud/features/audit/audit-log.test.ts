import { sql } from 'kysely'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../../../cloud/app-error.js'
import type { Actor } from '../../../../cloud/auth/actor.js'
import { hashSecret } from '../../../../cloud/auth/secret-format.js'
import type { AuditEntry } from '../../../../shared/audit.js'
import { formatServerTime, nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'

const SECOND = 1_000_000
const ADMIN: Actor = { name: 'console:usr_01M7Y2RQ85JBK7SD0QYTR42057', ip: '198.51.100.20' }
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

/** Client credentials in the body (client_secret_post), form-encoded as RFC 6749 §2.3.1 has it. */
function oauthForm(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString()
}

describeEachDatabase('audit log', (cloud: TestCloud) => {
  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const list = async (tenantId: string, query: Parameters<TestCloud['services']['audit']['list']>[1] = {}) =>
    (await cloud.services.audit.list(tenantId, { limit: 200, ...query })).data

  const requestToken = (clientId: string, clientSecret: string, remoteAddress: string) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/token',
      headers: FORM,
      remoteAddress,
      payload: oauthForm({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      }),
    })

  const revokeToken = (clientId: string, clientSecret: string, token: string, remoteAddress: string) =>
    cloud.app.inject({
      method: 'POST',
      url: '/api/oauth/revoke',
      headers: FORM,
      remoteAddress,
      payload: oauthForm({ token, client_id: clientId, client_secret: clientSecret }),
    })

  describe('one entry per change, with actor, time, target and client IP', () => {
    let tenantId: string
    let secrets: string[]
    let expected: Omit<AuditEntry, 'id' | 'details'>[]
    let keyId: string
    let appId: string
    let clientId: string
    let tokenId: string

    // One tenant goes through every audited action once, interleaved with attempts that change
    // nothing (refused, repeated), which must leave no entry.
    beforeAll(async () => {
      tenantId = await cloud.createTenant()
      const t = nowMicros()
      const at = (step: number) => t + step * SECOND
      const svc = cloud.services

      cloud.fixedNow = at(1)
      const key = await svc.apiKeys.create(tenantId, { scopes: ['employees:read'] }, ADMIN)
      keyId = key.id
      cloud.fixedNow = at(2)
      await svc.apiKeys.revoke(tenantId, key.id, ADMIN)
      await svc.apiKeys.revoke(tenantId, key.id, ADMIN)

      cloud.fixedNow = at(3)
      const app = await svc.oauthApps.create(
        tenantId,
        { name: 'gate agent', scopes: ['attendance:write'] },
        ADMIN,
      )
      appId = app.id
      clientId = app.clientId
      cloud.fixedNow = at(4)
      const rotated = await svc.oauthApps.rotateSecret(tenantId, app.id, ADMIN, 0)
      await expect(
        svc.oauthApps.rotateSecret(tenantId, 'app_00000000000000000000000000', ADMIN),
      ).rejects.toThrow(AppError)

      cloud.fixedNow = at(5)
      // Refused: the first secret was cut off by the rotation. No token, no entry.
      expect((await requestToken(app.clientId, app.clientSecret, '203.0.113.6')).statusCode).toBe(401)
      // X-Forwarded-For is not trusted here (trustProxy false): the socket's address is recorded.
      const issued = await cloud.app.inject({
        method: 'POST',
        url: '/api/oauth/token',
        headers: { ...FORM, 'x-forwarded-for': '192.0.2.99' },
        remoteAddress: '203.0.113.7',
        payload: oauthForm({
          grant_type: 'client_credentials',
          client_id: app.clientId,
          client_secret: rotated.clientSecret,
        }),
      })
      expect(issued.statusCode, issued.body).toBe(200)
      const token = issued.json().access_token as string
      tokenId = (
        await cloud.database.db
          .selectFrom('oauth_tokens')
          .select('id')
          .where('token_hash', '=', hashSecret(token))
          .executeTakeFirstOrThrow()
      ).id
      // Introspection reads; it changes nothing.
      const introspected = await cloud.app.inject({
        method: 'POST',
        url: '/api/oauth/introspect',
        headers: FORM,
        payload: oauthForm({ token, client_id: app.clientId, client_secret: rotated.clientSecret }),
      })
      expect(introspected.json()).toMatchObject({ active: true })

      cloud.fixedNow = at(6)
      expect((await revokeToken(app.clientId, rotated.clientSecret, token, '203.0.113.8')).statusCode).toBe(
        200,
      )
      // Revoking it again, or a token that does not exist, is a 200 (RFC 7009 §2.2) and no entry.
      expect((await revokeToken(app.clientId, rotated.clientSecret, token, '203.0.113.8')).statusCode).toBe(
        200,
      )

      cloud.fixedNow = at(7)
      await svc.oauthApps.revoke(tenantId, app.id, ADMIN)
      await svc.oauthApps.revoke(tenantId, app.id, ADMIN)

      secrets = [key.key, app.clientSecret, rotated.clientSecret, token]
      const tokenActor = `oauth_app:${app.id}`
      expected = [
        {
          occurredAt: formatServerTime(at(7)),
          actor: ADMIN.name,
          ip: ADMIN.ip,
          action: 'oauth_app.revoked',
          target: { type: 'oauth_app', id: app.id },
        },
        {
          occurredAt: formatServerTime(at(6)),
          actor: tokenActor,
          ip: '203.0.113.8',
          action: 'oauth_token.revoked',
          target: { type: 'oauth_token', id: tokenId },
        },
        {
          occurredAt: formatServerTime(at(5)),
          actor: tokenActor,
          ip: '203.0.113.7',
          action: 'oauth_token.issued',
          target: { type: 'oauth_token', id: tokenId },
        },
        {
          occurredAt: formatServerTime(at(4)),
          actor: ADMIN.name,
          ip: ADMIN.ip,
          action: 'oauth_app.secret_rotated',
          target: { type: 'oauth_app', id: app.id },
        },
        {
          occurredAt: formatServerTime(at(3)),
          actor: ADMIN.name,
          ip: ADMIN.ip,
          action: 'oauth_app.created',
          target: { type: 'oauth_app', id: app.id },
        },
        {
          occurredAt: formatServerTime(at(2)),
          actor: ADMIN.name,
          ip: ADMIN.ip,
          action: 'api_key.revoked',
          target: { type: 'api_key', id: key.id },
        },
        {
          occurredAt: formatServerTime(at(1)),
          actor: ADMIN.name,
          ip: ADMIN.ip,
          action: 'api_key.created',
          target: { type: 'api_key', id: key.id },
        },
      ]
      cloud.fixedNow = undefined
    })

    it('holds exactly one entry per change, newest first, each with who, when, what and from where', async () => {
      const entries = await list(tenantId)
      expect(entries.map(({ id: _, details: __, ...rest }) => rest)).toEqual(expected)
      for (const entry of entries) expect(entry.id).toMatch(/^aud_[0-9A-HJKMNP-TV-Z]{26}$/)
    })

    it('records what changed in the details', async () => {
      const byAction = Object.fromEntries((await list(tenantId)).map((e) => [e.action, e.details]))
      expect(byAction['api_key.created']).toMatchObject({
        scopes: ['employees:read'],
        expiresAt: expect.any(String),
      })
      expect(byAction['oauth_app.created']).toMatchObject({
        name: 'gate agent',
        clientId,
        scopes: ['attendance:write'],
      })
      expect(byAction['oauth_app.secret_rotated']).toMatchObject({
        newSecretId: expect.stringMatching(/^sec_/),
        previousSecretsExpireAt: expect.any(String),
      })
      expect(byAction['oauth_token.issued']).toEqual({ clientId, scopes: ['attendance:write'] })
    })

    it('never holds a secret, nor its hash, in any column', async () => {
      const rows = JSON.stringify(
        await cloud.database.db
          .selectFrom('audit_log')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .execute(),
      )
      expect(rows).toContain(appId)
      for (const secret of secrets) {
        expect(rows).not.toContain(secret)
        expect(rows).not.toContain(secret.slice(4))
        expect(rows).not.toContain(hashSecret(secret))
      }
    })

    it('filters by action and by target, alone or together', async () => {
      expect((await list(tenantId, { action: 'oauth_app.secret_rotated' })).map((e) => e.target.id)).toEqual([
        appId,
      ])
      expect((await list(tenantId, { targetId: appId })).map((e) => e.action)).toEqual([
        'oauth_app.revoked',
        'oauth_app.secret_rotated',
        'oauth_app.created',
      ])
      expect((await list(tenantId, { targetId: tokenId })).map((e) => e.action)).toEqual([
        'oauth_token.revoked',
        'oauth_token.issued',
      ])
      expect(
        (await list(tenantId, { targetId: keyId, action: 'api_key.revoked' })).map((e) => e.action),
      ).toEqual(['api_key.revoked'])
      expect(await list(tenantId, { targetId: keyId, action: 'oauth_app.created' })).toEqual([])
    })

    it('is scoped to the tenant: another tenant sees none of it, even asking by target', async () => {
      const other = await cloud.createTenant()
      const theirKey = await cloud.services.apiKeys.create(other, { scopes: ['employees:read'] }, TEST_ACTOR)
      expect((await list(other)).map((e) => e.target.id)).toEqual([theirKey.id])
      for (const targetId of [appId, keyId, tokenId]) expect(await list(other, { targetId })).toEqual([])
      expect(await list(tenantId, { targetId: theirKey.id })).toEqual([])
      expect((await list(tenantId)).map((e) => e.target.id)).not.toContain(theirKey.id)
    })
  })

  describe('paging', () => {
    let tenantId: string
    let keyIds: string[]

    beforeAll(async () => {
      tenantId = await cloud.createTenant()
      keyIds = []
      const t = nowMicros()
      for (let i = 0; i < 5; i++) {
        cloud.fixedNow = t + i * SECOND
        keyIds.push(
          (await cloud.services.apiKeys.create(tenantId, { scopes: ['employees:read'] }, TEST_ACTOR)).id,
        )
      }
      cloud.fixedNow = undefined
    })

    it('pages newest first with a cursor, every entry once, and ends with a null cursor', async () => {
      const seen: AuditEntry[] = []
      const sizes: number[] = []
      let cursor: string | undefined
      do {
        const page = await cloud.services.audit.list(tenantId, { limit: 2, ...(cursor ? { cursor } : {}) })
        sizes.push(page.data.length)
        seen.push(...page.data)
        cursor = page.nextCursor ?? undefined
      } while (cursor !== undefined)
      expect(sizes).toEqual([2, 2, 1])
      expect(seen.map((e) => e.target.id)).toEqual([...keyIds].reverse())
      const times = seen.map((e) => e.occurredAt)
      expect(times).toEqual([...times].sort().reverse())
      expect(new Set(times).size).toBe(5)
    })

    it('answers a full last page with a null cursor, and a default limit of 50', async () => {
      const exact = await cloud.services.audit.list(tenantId, { limit: 5 })
      expect(exact.data).toHaveLength(5)
      expect(exact.nextCursor).toBeNull()
      const byDefault = await cloud.services.audit.list(tenantId, {})
      expect(byDefault.data).toHaveLength(5)
      expect(byDefault.nextCursor).toBeNull()
    })

    it('keeps filters across pages when they are given again', async () => {
      const first = await cloud.services.audit.list(tenantId, { action: 'api_key.created', limit: 3 })
      expect(first.data).toHaveLength(3)
      const rest = await cloud.services.audit.list(tenantId, {
        action: 'api_key.created',
        limit: 3,
        cursor: first.nextCursor as string,
      })
      expect([...first.data, ...rest.data].map((e) => e.target.id)).toEqual([...keyIds].reverse())
      expect(rest.nextCursor).toBeNull()
    })

    it('refuses a cursor it did not make with invalid_cursor', async () => {
      for (const cursor of ['not-a-cursor', Buffer.from('{"b":"key_1"}').toString('base64url'), '']) {
        await expect(cloud.services.audit.list(tenantId, { cursor }), cursor).rejects.toMatchObject({
          code: 'invalid_cursor',
        })
      }
    })
  })

  // Last: a failure here can leave the log altered, and the TRUNCATE case would empty it.
  describe('append-only, enforced by the database', () => {
    let tenantId: string
    let entryId: string
    let original: unknown

    beforeAll(async () => {
      tenantId = await cloud.createTenant()
      await cloud.createApiKey(tenantId)
      const rows = await cloud.database.db
        .selectFrom('audit_log')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .execute()
      expect(rows).toHaveLength(1)
      entryId = (rows[0] as { id: string }).id
      original = rows[0]
    })

    const stored = () =>
      cloud.database.db.selectFrom('audit_log').selectAll().where('id', '=', entryId).executeTakeFirst()

    it('refuses an UPDATE of an entry', async () => {
      const db = cloud.database.db
      await expect(
        sql`update audit_log set actor = ${'someone else'} where id = ${entryId}`.execute(db),
      ).rejects.toThrow(/append-only/)
      await expect(
        db.updateTable('audit_log').set({ ip: '192.0.2.1' }).where('tenant_id', '=', tenantId).execute(),
      ).rejects.toThrow(/append-only/)
      expect(await stored()).toEqual(original)
    })

    it('refuses a DELETE of an entry, or of every entry', async () => {
      const db = cloud.database.db
      const count = async () =>
        Number((await sql<{ n: number }>`select count(*) as n from audit_log`.execute(db)).rows[0]?.n)
      const before = await count()
      expect(before).toBeGreaterThan(0)
      await expect(sql`delete from audit_log where id = ${entryId}`.execute(db)).rejects.toThrow(
        /append-only/,
      )
      await expect(sql`delete from audit_log`.execute(db)).rejects.toThrow(/append-only/)
      expect(await stored()).toEqual(original)
      expect(await count()).toBe(before)
    })

    it('refuses an upsert that would overwrite an entry', async () => {
      const db = cloud.database.db
      const forged = sql`insert into audit_log (id, tenant_id, occurred_at, actor, action, target_type, target_id)
        values (${entryId}, ${tenantId}, 1, 'forged', 'api_key.created', 'api_key', 'key_forged')`
      await expect(
        sql`${forged} on conflict (id) do update set actor = 'forged'`.execute(db),
      ).rejects.toThrow(/append-only/)
      if (cloud.kind === 'sqlite') {
        // SQLite's REPLACE deletes the old row without firing delete triggers (unless
        // recursive_triggers is on), so it needs a guard of its own.
        await expect(
          sql`insert or replace into audit_log (id, tenant_id, occurred_at, actor, action, target_type, target_id)
            values (${entryId}, ${tenantId}, 1, 'forged', 'api_key.created', 'api_key', 'key_forged')`.execute(
            db,
          ),
        ).rejects.toThrow(/append-only/)
      }
      expect(await stored()).toEqual(original)
    })

    it('still takes new entries', async () => {
      const before = (await list(tenantId)).length
      await cloud.createApiKey(tenantId)
      expect(await list(tenantId)).toHaveLength(before + 1)
    })

    // PostgreSQL only: SQLite has no TRUNCATE (its DELETE without WHERE fires the triggers, above).
    if (cloud.kind === 'postgres') {
      it('refuses TRUNCATE, which fires no row triggers', async () => {
        await expect(sql`truncate audit_log`.execute(cloud.database.db)).rejects.toThrow(/append-only/)
        expect(await stored()).toEqual(original)
      })
    }
  })
})
