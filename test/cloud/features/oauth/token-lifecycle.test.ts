/**
 * OAuth tokens (docs/decisions/0016-oauth-client-credentials.md): an expired, revoked, mistyped (bad
 * checksum) or tampered token is refused; revoking an app ends all its tokens at once; a rotated secret keeps
 * working for its grace and not after; token issue and revoke are audited with actor, target and client
 * address.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ACCESS_TOKEN, generateSecret, isWellFormedSecret } from '../../../../cloud/auth/secret-format.js'
import { nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import {
  createClient,
  expectInvalidToken,
  expectOAuthError,
  getEmployees,
  issueToken,
  oauthPost,
  REVOKE,
  SECOND,
  type TestClient,
  TOKEN,
} from './conformance-support.js'

const GRANT = { grant_type: 'client_credentials' }
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** The token with the character at `index` replaced by another base62 character. */
function changedAt(token: string, index: number): string {
  const current = token[index] as string
  const replacement = BASE62[(BASE62.indexOf(current) + 1) % BASE62.length] as string
  return token.slice(0, index) + replacement + token.slice(index + 1)
}

describeEachDatabase('OAuth token lifecycle', (cloud: TestCloud) => {
  let tenantId: string
  let client: TestClient

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    client = await createClient(cloud, tenantId, ['employees:read'])
  })

  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const grant = (c: TestClient, auth: 'basic' | 'post' = 'basic') =>
    oauthPost(cloud.app, TOKEN, { params: GRANT, client: { auth, client: c } })

  describe('refused tokens', () => {
    it('refuses a token from 3600 s after its issue on, and accepts it until then', async () => {
      const issued = nowMicros()
      cloud.fixedNow = issued
      const { access_token, expires_in } = await issueToken(cloud.app, client)
      expect(expires_in).toBe(3600)
      cloud.fixedNow = issued + 3600 * SECOND - 1
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
      cloud.fixedNow = issued + 3600 * SECOND
      expectInvalidToken(await getEmployees(cloud.app, access_token))
      cloud.fixedNow = issued + 7 * 86_400 * SECOND
      expectInvalidToken(await getEmployees(cloud.app, access_token))
    })

    it('refuses a token with any one character changed: its checksum no longer matches', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      // In the random part, at its start and end, and in the checksum itself.
      for (const index of [4, 20, 43, 44, 49]) {
        const tampered = changedAt(access_token, index)
        expect(isWellFormedSecret(ACCESS_TOKEN, tampered), `index ${index}`).toBe(false)
        expectInvalidToken(await getEmployees(cloud.app, tampered))
      }
      // Case and prefix changes, truncation, an extra character.
      for (const tampered of [
        access_token.toUpperCase(),
        `hjk_${access_token.slice(4)}`,
        access_token.slice(0, -1),
        `${access_token}0`,
      ]) {
        expectInvalidToken(await getEmployees(cloud.app, tampered))
      }
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
    })

    it('refuses a token with a valid checksum that was never issued', async () => {
      const invented = generateSecret(ACCESS_TOKEN)
      expect(isWellFormedSecret(ACCESS_TOKEN, invented)).toBe(true)
      expectInvalidToken(await getEmployees(cloud.app, invented))
    })

    it('refuses a revoked token, on the very next request', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
      const res = await oauthPost(cloud.app, REVOKE, {
        params: { token: access_token },
        client: { auth: 'basic', client },
      })
      expect(res.statusCode).toBe(200)
      expectInvalidToken(await getEmployees(cloud.app, access_token))
    })

    it('refuses a client secret used as a bearer token', async () => {
      expectInvalidToken(await getEmployees(cloud.app, client.clientSecret))
    })
  })

  describe('revoking an app', () => {
    it('ends every token issued to it at once, and no other app’s', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read', 'attendance:read'])
      const tokens = [
        await issueToken(cloud.app, app),
        await issueToken(cloud.app, app, 'employees:read'),
        await issueToken(cloud.app, app),
      ]
      const bystander = await issueToken(cloud.app, client)
      for (const t of tokens) expect((await getEmployees(cloud.app, t.access_token)).statusCode).toBe(200)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      for (const t of tokens) expectInvalidToken(await getEmployees(cloud.app, t.access_token))
      expect((await getEmployees(cloud.app, bystander.access_token)).statusCode).toBe(200)
    })

    it('stops it getting tokens, by either authentication method', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      expect((await grant(app)).statusCode).toBe(200)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      expectOAuthError(await grant(app, 'basic'), 401, 'invalid_client')
      expectOAuthError(await grant(app, 'post'), 401, 'invalid_client')
    })
  })

  describe('rotating the client secret', () => {
    it('makes the new secret work at once; the old one works for the default grace (24 h), then not', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const rotatedAt = nowMicros()
      cloud.fixedNow = rotatedAt
      const rotated = await cloud.services.oauthApps.rotateSecret(tenantId, app.id, TEST_ACTOR)
      const fresh = { ...app, clientSecret: rotated.clientSecret }
      expect(rotated.clientSecret).not.toBe(app.clientSecret)
      for (const auth of ['basic', 'post'] as const) {
        expect((await grant(fresh, auth)).statusCode).toBe(200)
        expect((await grant(app, auth)).statusCode).toBe(200)
      }
      cloud.fixedNow = rotatedAt + 24 * 3600 * SECOND - 1
      expect((await grant(app)).statusCode).toBe(200)
      cloud.fixedNow = rotatedAt + 24 * 3600 * SECOND
      expectOAuthError(await grant(app, 'basic'), 401, 'invalid_client')
      expectOAuthError(await grant(app, 'post'), 401, 'invalid_client')
      expect((await grant(fresh)).statusCode).toBe(200)
    })

    it('honours a chosen grace to the microsecond', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const rotatedAt = nowMicros()
      cloud.fixedNow = rotatedAt
      await cloud.services.oauthApps.rotateSecret(tenantId, app.id, TEST_ACTOR, 600)
      cloud.fixedNow = rotatedAt + 600 * SECOND - 1
      expect((await grant(app)).statusCode).toBe(200)
      cloud.fixedNow = rotatedAt + 600 * SECOND
      expectOAuthError(await grant(app), 401, 'invalid_client')
    })

    it('cuts over at once with a grace of 0', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const rotated = await cloud.services.oauthApps.rotateSecret(tenantId, app.id, TEST_ACTOR, 0)
      expectOAuthError(await grant(app, 'basic'), 401, 'invalid_client')
      expectOAuthError(await grant(app, 'post'), 401, 'invalid_client')
      expect((await grant({ ...app, clientSecret: rotated.clientSecret })).statusCode).toBe(200)
    })

    it('leaves the tokens already issued working: rotation replaces the secret, not the tokens', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const { access_token } = await issueToken(cloud.app, app)
      await cloud.services.oauthApps.rotateSecret(tenantId, app.id, TEST_ACTOR, 0)
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
    })
  })

  describe('audit', () => {
    it('records token issue and revoke with actor oauth_app:<id>, target, client address and no secret', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const { access_token } = await issueToken(cloud.app, app)
      const revoked = await oauthPost(cloud.app, REVOKE, {
        params: { token: access_token },
        client: { auth: 'post', client: app },
      })
      expect(revoked.statusCode).toBe(200)
      const audit = cloud.services.audit
      const issued = (await audit.list(tenantId, { action: 'oauth_token.issued' })).data.filter(
        (e) => e.actor === `oauth_app:${app.id}`,
      )
      const ended = (await audit.list(tenantId, { action: 'oauth_token.revoked' })).data.filter(
        (e) => e.actor === `oauth_app:${app.id}`,
      )
      expect(issued).toHaveLength(1)
      expect(ended).toHaveLength(1)
      for (const entry of [...issued, ...ended]) {
        expect(entry.ip).toBe('127.0.0.1')
        expect(entry.target.type).toBe('oauth_token')
        expect(entry.target.id).toMatch(/^tok_[0-9A-HJKMNP-TV-Z]{26}$/)
        expect(entry.details).toMatchObject({ clientId: app.clientId })
        const text = JSON.stringify(entry)
        expect(text).not.toContain(access_token)
        expect(text).not.toContain(app.clientSecret)
      }
      expect(issued[0]?.details).toMatchObject({ scopes: ['employees:read'] })
      // The same token, issued then revoked.
      expect(ended[0]?.target.id).toBe(issued[0]?.target.id)
    })

    it('records no revoke for a token that was not live, and none for a refused request', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      for (const token of ['garbage', generateSecret(ACCESS_TOKEN)]) {
        const res = await oauthPost(cloud.app, REVOKE, {
          params: { token },
          client: { auth: 'basic', client: app },
        })
        expect(res.statusCode).toBe(200)
      }
      expectOAuthError(
        await oauthPost(cloud.app, TOKEN, {
          params: { ...GRANT, scope: 'attendance:write' },
          client: { auth: 'basic', client: app },
        }),
        400,
        'invalid_scope',
      )
      const entries = (await cloud.services.audit.list(tenantId, { limit: 200 })).data.filter(
        (e) => e.actor === `oauth_app:${app.id}`,
      )
      expect(entries).toEqual([])
    })
  })
})
