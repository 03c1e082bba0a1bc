/**
 * A test per RFC point: token revocation (RFC 7009), token introspection (RFC 7662) and
 * authorization server metadata (RFC 8414).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../../cloud/app.js'
import { ACCESS_TOKEN, generateSecret } from '../../../../cloud/auth/secret-format.js'
import { SCOPES } from '../../../../shared/scopes.js'
import { nowMicros } from '../../../../shared/time.js'
import { describeEachDatabase, TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import {
  createClient,
  expectInvalidToken,
  expectNoStore,
  expectOAuthError,
  getEmployees,
  INTROSPECT,
  issueToken,
  METADATA,
  oauthPost,
  REVOKE,
  SECOND,
  type TestClient,
} from './conformance-support.js'

describeEachDatabase('OAuth revocation (RFC 7009) and introspection (RFC 7662)', (cloud: TestCloud) => {
  let tenantId: string
  let client: TestClient
  let other: TestClient

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    client = await createClient(cloud, tenantId, ['employees:read', 'attendance:read'])
    // Another client, of another tenant: its tokens are none of the first client's business.
    other = await createClient(cloud, await cloud.createTenant(), ['employees:read'])
  })

  afterEach(() => {
    cloud.fixedNow = undefined
  })

  const revoke = (token: string, c = client, extra: Record<string, string> = {}) =>
    oauthPost(cloud.app, REVOKE, { params: { token, ...extra }, client: { auth: 'basic', client: c } })
  const introspect = (token: string, c = client, auth: 'basic' | 'post' = 'basic') =>
    oauthPost(cloud.app, INTROSPECT, { params: { token }, client: { auth, client: c } })

  describe('RFC 7009 revocation', () => {
    it('revokes a token: 200, and the very next API request with it is refused', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
      const res = await revoke(access_token)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['content-type']).toMatch(/^application\/json\b/)
      expectNoStore(res)
      expect(res.json()).toEqual({})
      expectInvalidToken(await getEmployees(cloud.app, access_token))
    })

    it('revokes by client_secret_post and with a JSON body too', async () => {
      const a = await issueToken(cloud.app, client)
      const byPost = await oauthPost(cloud.app, REVOKE, {
        params: { token: a.access_token },
        client: { auth: 'post', client },
      })
      expect(byPost.statusCode, byPost.body).toBe(200)
      expectInvalidToken(await getEmployees(cloud.app, a.access_token))
      const b = await issueToken(cloud.app, client)
      const byJson = await oauthPost(cloud.app, REVOKE, {
        params: { token: b.access_token },
        client: { auth: 'basic', client },
        json: true,
      })
      expect(byJson.statusCode, byJson.body).toBe(200)
      expectInvalidToken(await getEmployees(cloud.app, b.access_token))
    })

    it('§2.1: takes token_type_hint as a hint only, whatever it says', async () => {
      for (const hint of ['access_token', 'refresh_token', 'something_else']) {
        const { access_token } = await issueToken(cloud.app, client)
        expect((await revoke(access_token, client, { token_type_hint: hint })).statusCode).toBe(200)
        expectInvalidToken(await getEmployees(cloud.app, access_token))
      }
    })

    it('§2.2: answers 200 for a token already revoked, unknown, or not a token at all', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      await revoke(access_token)
      for (const token of [
        access_token,
        generateSecret(ACCESS_TOKEN),
        'garbage',
        '',
        'hja_',
        'x'.repeat(1024),
      ]) {
        const res = await revoke(token)
        expect(res.statusCode, `${token.slice(0, 20)}: ${res.body}`).toBe(200)
        expect(res.json()).toEqual({})
      }
    })

    it('§2.1: refuses to revoke a token issued to another client, which keeps working', async () => {
      const theirs = await issueToken(cloud.app, other)
      expectOAuthError(await revoke(theirs.access_token), 400, 'unauthorized_client')
      expect((await getEmployees(cloud.app, theirs.access_token)).statusCode).toBe(200)
    })

    it('cannot be used to revoke an API key, which keeps working', async () => {
      const key = await cloud.createApiKey(tenantId, ['employees:read'])
      expect((await revoke(key)).statusCode).toBe(200)
      expect((await getEmployees(cloud.app, key)).statusCode).toBe(200)
    })

    it('§2.1: requires client authentication, and the token parameter', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      const anonymous = await oauthPost(cloud.app, REVOKE, { params: { token: access_token } })
      expectOAuthError(anonymous, 401, 'invalid_client')
      expect(anonymous.headers['www-authenticate']).toBe('Basic realm="hajri"')
      expectOAuthError(
        await revoke(access_token, { ...client, clientSecret: 'wrong' }),
        401,
        'invalid_client',
      )
      expect((await getEmployees(cloud.app, access_token)).statusCode).toBe(200)
      expectOAuthError(
        await oauthPost(cloud.app, REVOKE, { client: { auth: 'basic', client } }),
        400,
        'invalid_request',
      )
      const twice = await oauthPost(cloud.app, REVOKE, {
        params: [
          ['token', access_token],
          ['token', access_token],
        ],
        client: { auth: 'basic', client },
      })
      expectOAuthError(twice, 400, 'invalid_request')
    })
  })

  describe('RFC 7662 introspection', () => {
    it('§2.2: describes a live token of the client: active, scope, client_id, token_type, exp, iat', async () => {
      const issuedAt = Math.floor(nowMicros() / SECOND) * SECOND + 123_456
      cloud.fixedNow = issuedAt
      const { access_token } = await issueToken(cloud.app, client, 'employees:read')
      cloud.fixedNow = issuedAt + 10 * SECOND
      for (const auth of ['basic', 'post'] as const) {
        const res = await introspect(access_token, client, auth)
        expect(res.statusCode, res.body).toBe(200)
        expect(res.headers['content-type']).toMatch(/^application\/json\b/)
        expectNoStore(res)
        const body = res.json()
        expect(body).toMatchObject({
          active: true,
          scope: 'employees:read',
          client_id: client.clientId,
          token_type: 'Bearer',
          iat: Math.floor(issuedAt / SECOND),
          exp: Math.floor(issuedAt / SECOND) + 3600,
          sub: client.id,
          iss: 'http://localhost:80',
        })
      }
    })

    it('§2.2: says only active:false for a revoked, expired, unknown or malformed token', async () => {
      const revoked = await issueToken(cloud.app, client)
      await revoke(revoked.access_token)
      const start = nowMicros()
      cloud.fixedNow = start
      const expiring = await issueToken(cloud.app, client)
      cloud.fixedNow = start + 3600 * SECOND
      for (const token of [
        revoked.access_token,
        expiring.access_token,
        generateSecret(ACCESS_TOKEN),
        'garbage',
        '',
      ]) {
        const res = await introspect(token)
        expect(res.statusCode, res.body).toBe(200)
        // "SHOULD NOT include any additional information about an inactive token".
        expect(res.json()).toEqual({ active: false })
      }
    })

    it('§2.2 and §4: reports another client’s live token as inactive, and does not end it', async () => {
      const theirs = await issueToken(cloud.app, other)
      expect((await introspect(theirs.access_token)).json()).toEqual({ active: false })
      expect((await introspect(theirs.access_token, other)).json()).toMatchObject({ active: true })
    })

    it('ends a revoked app’s tokens and its credentials: it can no longer introspect', async () => {
      const app = await createClient(cloud, tenantId, ['employees:read'])
      const { access_token } = await issueToken(cloud.app, app)
      await cloud.services.oauthApps.revoke(tenantId, app.id, TEST_ACTOR)
      expectOAuthError(await introspect(access_token, app), 401, 'invalid_client')
      expectInvalidToken(await getEmployees(cloud.app, access_token))
    })

    it('§2.1: requires client authentication and the token parameter', async () => {
      const { access_token } = await issueToken(cloud.app, client)
      expectOAuthError(
        await oauthPost(cloud.app, INTROSPECT, { params: { token: access_token } }),
        401,
        'invalid_client',
      )
      expectOAuthError(
        await introspect(access_token, { ...client, clientSecret: 'wrong' }),
        401,
        'invalid_client',
      )
      expectOAuthError(
        await oauthPost(cloud.app, INTROSPECT, { client: { auth: 'basic', client } }),
        400,
        'invalid_request',
      )
    })
  })

  describe('RFC 8414 metadata', () => {
    const metadata = (host: string) => cloud.app.inject({ method: 'GET', url: METADATA, headers: { host } })

    it('§3.2: is JSON, and its issuer is the base URL the client used (§3.3)', async () => {
      const res = await metadata('auth.example.test:8443')
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toMatch(/^application\/json\b/)
      const body = res.json()
      const issuer = 'http://auth.example.test:8443'
      expect(body).toEqual({
        issuer,
        token_endpoint: `${issuer}/api/oauth/token`,
        revocation_endpoint: `${issuer}/api/oauth/revoke`,
        introspection_endpoint: `${issuer}/api/oauth/introspect`,
        grant_types_supported: ['client_credentials'],
        response_types_supported: [],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [...SCOPES],
        service_documentation: `${issuer}/docs`,
      })
      // §2: no query or fragment in the issuer.
      const url = new URL(body.issuer)
      expect(url.search + url.hash).toBe('')
    })

    it('§2: the issuer is the configured public URL, whatever Host the request names', async () => {
      const app = await buildApp({
        config: {
          bodyLimitBytes: 1024 * 1024,
          trustProxy: false,
          logLevel: 'silent',
          publicUrl: 'https://hajri.example.com',
        },
        database: cloud.database,
        logger: false,
        closeDatabase: false,
      })
      try {
        const res = await app.inject({ method: 'GET', url: METADATA, headers: { host: 'evil.example' } })
        expect(res.json()).toMatchObject({
          issuer: 'https://hajri.example.com',
          token_endpoint: 'https://hajri.example.com/api/oauth/token',
        })
      } finally {
        await app.close()
      }
    })

    it('names endpoints that answer', async () => {
      const body = (await metadata('localhost:80')).json()
      for (const name of ['token_endpoint', 'revocation_endpoint', 'introspection_endpoint']) {
        const path = new URL(body[name]).pathname
        const res = await oauthPost(cloud.app, path, { client: { auth: 'basic', client } })
        // Reached, and answered in the OAuth shape (no parameters: invalid_request).
        expectOAuthError(res, 400, 'invalid_request')
      }
    })
  })
})
