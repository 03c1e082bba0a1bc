/**
 * A test per RFC point: POST /api/oauth/token against RFC 6749 §4.4 (client credentials),
 * §2.3 (client authentication), §3.2 (parameters), §3.3 (scope), §5.1 (success) and §5.2 (errors;
 * their shape is in error-response-conformance.test.ts).
 * Requests are written here from the RFCs, not with the server's own helpers.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { describeEachDatabase, employee, type TestCloud } from '../../../support/cloud-harness.js'
import {
  AWKWARD_CLIENT_ID,
  basic,
  basicRaw,
  createClient,
  EMPLOYEES,
  expectNoStore,
  expectOAuthError,
  FORM_TYPE,
  form,
  formEncode,
  getEmployees,
  type OAuthRequest,
  oauthPost,
  PUNCHES,
  type TestClient,
  TOKEN,
  type TokenBody,
} from './conformance-support.js'

const GRANT = { grant_type: 'client_credentials' }

describeEachDatabase('OAuth token endpoint (RFC 6749 §4.4)', (cloud: TestCloud) => {
  let client: TestClient
  let awkward: TestClient
  const token = (request: OAuthRequest) => oauthPost(cloud.app, TOKEN, request)
  const post = (params: Record<string, string> | [string, string][], c = client): OAuthRequest => ({
    params,
    client: { auth: 'post', client: c },
  })

  beforeAll(async () => {
    const tenantId = await cloud.createTenant()
    await cloud.upsertEmployees(tenantId, [employee('E001')])
    client = await createClient(cloud, tenantId, ['employees:read', 'attendance:write'])
    awkward = await createClient(cloud, tenantId, ['employees:read'], AWKWARD_CLIENT_ID)
  })

  describe('§4.4.2 access token request and §5.1 response', () => {
    it('issues a token for a form-encoded request, with every §5.1 member and no-store', async () => {
      const res = await token({ params: GRANT, client: { auth: 'basic', client } })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['content-type']).toMatch(/^application\/json\b/)
      expectNoStore(res)
      const body = res.json() as TokenBody
      expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type'])
      expect(body.token_type).toBe('Bearer')
      expect(body.expires_in).toBe(3600)
      expect(body.scope).toBe('employees:read attendance:write')
      // Opaque, prefixed for secret scanners, 40 random base62 characters and a checksum.
      expect(body.access_token).toMatch(/^hja_[0-9A-Za-z]{46}$/)
      expect((await getEmployees(cloud.app, body.access_token)).statusCode).toBe(200)
    })

    it('accepts a charset parameter on the form media type, as OAuth libraries send it', async () => {
      const res = await token({
        params: GRANT,
        client: { auth: 'basic', client },
        headers: { 'content-type': `${FORM_TYPE};charset=UTF-8` },
      })
      expect(res.statusCode, res.body).toBe(200)
    })

    it('accepts a JSON body too, by either authentication method', async () => {
      for (const auth of ['basic', 'post'] as const) {
        const res = await token({ params: GRANT, client: { auth, client }, json: true })
        expect(res.statusCode, res.body).toBe(200)
        expectNoStore(res)
        expect((await getEmployees(cloud.app, (res.json() as TokenBody).access_token)).statusCode).toBe(200)
      }
    })

    it('issues a new token on every request', async () => {
      const a = (await token({ params: GRANT, client: { auth: 'basic', client } })).json() as TokenBody
      const b = (await token({ params: GRANT, client: { auth: 'basic', client } })).json() as TokenBody
      expect(a.access_token).not.toBe(b.access_token)
    })

    it('answers invalid_request when grant_type is missing', async () => {
      expectOAuthError(await token({ params: {}, client: { auth: 'basic', client } }), 400, 'invalid_request')
      expectOAuthError(await token(post({ scope: 'employees:read' })), 400, 'invalid_request')
    })

    it('answers unsupported_grant_type for any other grant, to an authenticated client', async () => {
      for (const grant of ['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS', '']) {
        const res = await token({ params: { grant_type: grant }, client: { auth: 'basic', client } })
        expectOAuthError(res, 400, 'unsupported_grant_type')
      }
    })

    it('answers invalid_request for a body that is not a form or a JSON object of strings', async () => {
      const basicAuth = { authorization: basic(client.clientId, client.clientSecret) }
      for (const [payload, code] of [
        ['{"grant_type":["client_credentials"]}', 'oauth_invalid_request'],
        ['{"grant_type":1}', 'oauth_invalid_request'],
        ['{"grant_type":null}', 'oauth_invalid_request'],
        ['["grant_type","client_credentials"]', 'oauth_invalid_request'],
        ['"grant_type=client_credentials"', 'oauth_invalid_request'],
        // Not JSON at all: the problem it began as keeps its stable code.
        ['{"grant_type":', 'malformed_json'],
      ]) {
        const res = await cloud.app.inject({
          method: 'POST',
          url: TOKEN,
          headers: { ...basicAuth, 'content-type': 'application/json' },
          payload,
        })
        expectOAuthError(res, 400, 'invalid_request', code)
      }
      const empty = await cloud.app.inject({ method: 'POST', url: TOKEN, headers: basicAuth })
      expectOAuthError(empty, 400, 'invalid_request')
    })

    it('refuses a media type other than form or JSON, in the OAuth shape', async () => {
      for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/xml']) {
        const res = await cloud.app.inject({
          method: 'POST',
          url: TOKEN,
          headers: { authorization: basic(client.clientId, client.clientSecret), 'content-type': type },
          payload: form(GRANT),
        })
        // 415 is HTTP's word for it; the error is still RFC 6749's invalid_request.
        const body = expectOAuthError(res, 415, 'invalid_request', 'unsupported_media_type')
        // RFC 6749 §4.4.2 names the form media type; a client told "send JSON" is misled.
        expect(body.error_description, 'the description names the form media type').toMatch(
          /x-www-form-urlencoded/,
        )
      }
    })
  })

  describe('§2.3.1 client_secret_basic', () => {
    it('form-decodes each half of the Basic credentials: "+" is a space, %XX a UTF-8 byte', async () => {
      // basic() encodes the space as "+" and the rest as %XX, as RFC 6749 Appendix B does.
      expect(formEncode(AWKWARD_CLIENT_ID)).toBe('hr+payroll%3Async%2B1%25%26%3D%2F')
      const res = await token({ params: GRANT, client: { auth: 'basic', client: awkward } })
      expect(res.statusCode, res.body).toBe(200)
      // The same id with the space as %20, and a secret every byte of which is %XX.
      const id = encodeURIComponent(AWKWARD_CLIENT_ID)
      const secret = [...Buffer.from(awkward.clientSecret)].map((b) => `%${b.toString(16)}`).join('')
      const spelled = await cloud.app.inject({
        method: 'POST',
        url: TOKEN,
        headers: { authorization: basicRaw(`${id}:${secret}`), 'content-type': FORM_TYPE },
        payload: form(GRANT),
      })
      expect(spelled.statusCode, spelled.body).toBe(200)
    })

    it('does not take the halves as they are: an id sent without its encoding is not the client', async () => {
      // "hr payroll" before the first ":" is taken as the whole id, as §2.3.1 requires.
      const raw = await token({
        params: GRANT,
        headers: { authorization: basicRaw(`${AWKWARD_CLIENT_ID}:${awkward.clientSecret}`) },
      })
      const body = expectOAuthError(raw, 401, 'invalid_client')
      expect(raw.headers['www-authenticate']).toBe('Basic realm="hajri"')
      expect(JSON.stringify(body)).not.toContain(awkward.clientSecret)
    })

    it('reads the scheme case-insensitively and tolerates extra spaces (RFC 7235 §2.1)', async () => {
      const credentials = basic(client.clientId, client.clientSecret).slice('Basic '.length)
      for (const header of [`basic ${credentials}`, `BASIC ${credentials}`, `Basic   ${credentials}`]) {
        const res = await token({ params: GRANT, headers: { authorization: header } })
        expect(res.statusCode, header).toBe(200)
      }
    })

    it('answers invalid_client, 401 with a Basic challenge, for Basic credentials that do not authenticate', async () => {
      for (const [label, header] of [
        ['a wrong secret', basic(client.clientId, `${client.clientSecret}x`)],
        ['an empty secret', basic(client.clientId, '')],
        ['an unknown client', basic('hjc_nobody_at_all', client.clientSecret)],
        ['an empty client id', basic('', client.clientSecret)],
        ['no colon', basicRaw(client.clientId)],
        ['a bad %-escape in the id', basicRaw(`${client.clientId}%zz:${client.clientSecret}`)],
        ['a truncated %-escape in the secret', basicRaw(`${client.clientId}:${client.clientSecret}%E0%A4`)],
        ['text that is not base64', 'Basic ***'],
        ['no credentials', 'Basic'],
        ['another scheme', `Bearer ${client.clientSecret}`],
      ]) {
        const res = await token({ params: GRANT, headers: { authorization: header as string } })
        expectOAuthError(res, 401, 'invalid_client')
        expect(res.headers['www-authenticate'], label).toBe('Basic realm="hajri"')
      }
    })

    it('answers invalid_client, never a server error, for a client id no client can have (NUL, controls)', async () => {
      // Found by fuzzing: PostgreSQL refuses NUL in text, and the lookup must not get that far.
      for (const id of ['\u0000', `${client.clientId}\u0000`, 'a\u0001b', '\u007f']) {
        const viaBasic = await token({
          params: GRANT,
          headers: { authorization: basic(id, client.clientSecret) },
        })
        expectOAuthError(viaBasic, 401, 'invalid_client')
        expectOAuthError(await token(post(GRANT, { ...client, clientId: id })), 401, 'invalid_client')
      }
    })

    it('answers invalid_client with a Basic challenge when the client sent no authentication', async () => {
      const res = await token({ params: GRANT })
      expectOAuthError(res, 401, 'invalid_client')
      expect(res.headers['www-authenticate']).toBe('Basic realm="hajri"')
    })
  })

  describe('§2.3.1 client_secret_post', () => {
    it('authenticates a client by client_id and client_secret in the body, form or JSON', async () => {
      const res = await token(post(GRANT, awkward))
      expect(res.statusCode, res.body).toBe(200)
      expect((res.json() as TokenBody).scope).toBe('employees:read')
      const json = await token({ ...post(GRANT, awkward), json: true })
      expect(json.statusCode, json.body).toBe(200)
    })

    it('answers invalid_client, 401, for a wrong secret or an unknown client', async () => {
      expectOAuthError(await token(post(GRANT, { ...client, clientSecret: 'nope' })), 401, 'invalid_client')
      expectOAuthError(
        await token(post(GRANT, { ...client, clientId: 'hjc_unknown' })),
        401,
        'invalid_client',
      )
    })

    it('sends a challenge with every 401, as HTTP requires (RFC 9110 §15.5.2)', async () => {
      // RFC 6749 §5.2 lets invalid_client be a 401 "to indicate which HTTP authentication schemes
      // are supported"; a 401 without WWW-Authenticate breaks HTTP itself.
      const res = await token(post(GRANT, { ...client, clientSecret: 'nope' }))
      expectOAuthError(res, 401, 'invalid_client')
      expect(res.headers['www-authenticate']).toMatch(/^Basic /)
    })
  })

  describe('§2.3: one authentication method per request', () => {
    it('answers invalid_request to Basic credentials and a client_secret in the body', async () => {
      const res = await token({
        params: { ...GRANT, client_secret: client.clientSecret },
        client: { auth: 'basic', client },
      })
      expectOAuthError(res, 400, 'invalid_request')
    })

    it('answers invalid_request when the body names another client than the Basic credentials', async () => {
      const res = await token({
        params: { ...GRANT, client_id: awkward.clientId },
        client: { auth: 'basic', client },
      })
      expectOAuthError(res, 400, 'invalid_request')
    })

    it('lets a Basic client repeat its own client_id in the body (§3.2.1 lets a client name itself)', async () => {
      const res = await token({
        params: { ...GRANT, client_id: client.clientId },
        client: { auth: 'basic', client },
      })
      expect(res.statusCode, res.body).toBe(200)
    })
  })

  describe('§3.2: request parameters', () => {
    for (const name of ['grant_type', 'scope', 'client_id', 'client_secret']) {
      it(`answers invalid_request when ${name} is repeated, even with the same value`, async () => {
        const value: Record<string, string> = {
          grant_type: 'client_credentials',
          scope: 'employees:read',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }
        const pairs: [string, string][] = Object.entries(value)
        pairs.push([name, value[name] as string])
        expectOAuthError(await token({ params: pairs }), 400, 'invalid_request')
      })
    }

    it('ignores parameters it does not know, repeated or not', async () => {
      const res = await token(
        post([
          ['grant_type', 'client_credentials'],
          ['audience', 'https://example.test'],
          ['resource', 'a'],
          ['resource', 'b'],
          ['__proto__', 'x'],
        ]),
      )
      expect(res.statusCode, res.body).toBe(200)
    })
  })

  describe('§3.3 and §4.4.2: scope', () => {
    const scopeOf = async (scope: string | undefined) => {
      const res = await token({
        params: scope === undefined ? GRANT : { ...GRANT, scope },
        client: { auth: 'basic', client },
      })
      return res
    }

    it('grants every scope of the app when scope is left out, and says so', async () => {
      const res = await scopeOf(undefined)
      expect((res.json() as TokenBody).scope).toBe('employees:read attendance:write')
    })

    it('grants exactly a requested subset, and the token carries no more', async () => {
      const res = await scopeOf('employees:read')
      expect(res.statusCode, res.body).toBe(200)
      const body = res.json() as TokenBody
      expect(body.scope).toBe('employees:read')
      expect((await getEmployees(cloud.app, body.access_token)).statusCode).toBe(200)
      const write = await cloud.app.inject({
        method: 'POST',
        url: PUNCHES,
        headers: { authorization: `Bearer ${body.access_token}` },
        payload: { employeeCode: 'E001', punchType: 'IN' },
      })
      expect(write.statusCode, write.body).toBe(403)
      expect(write.json()).toMatchObject({ code: 'insufficient_scope' })
    })

    it('grants the requested scopes in any order, a repeated one once', async () => {
      const res = await scopeOf('attendance:write employees:read attendance:write')
      expect(res.statusCode, res.body).toBe(200)
      expect((res.json() as TokenBody).scope.split(' ').sort()).toEqual([
        'attendance:write',
        'employees:read',
      ])
    })

    it('answers invalid_scope for a scope the app was not given, or no scope at all', async () => {
      for (const scope of ['attendance:read', 'employees:read attendance:read', 'admin', 'employees:*', '']) {
        expectOAuthError(await scopeOf(scope), 400, 'invalid_scope')
      }
    })
  })

  it('serves tokens that work on the public API for the scope they carry', async () => {
    const body = (await token({ params: GRANT, client: { auth: 'basic', client } })).json() as TokenBody
    const res = await cloud.app.inject({
      method: 'GET',
      url: EMPLOYEES,
      headers: { authorization: `Bearer ${body.access_token}` },
    })
    expect(res.json().data.map((e: { employeeCode: string }) => e.employeeCode)).toEqual(['E001'])
    const punch = await cloud.app.inject({
      method: 'POST',
      url: PUNCHES,
      headers: { authorization: `Bearer ${body.access_token}` },
      payload: { employeeCode: 'E001', punchType: 'IN', externalId: `oauth-${Date.now()}` },
    })
    expect(punch.statusCode, punch.body).toBe(201)
  })
})
