/**
 * A test per RFC point: the errors of the OAuth endpoints, per RFC 6749 §5.2, with the RFC 9457
 * members beside them (docs/decisions/0039-oauth-error-shape.md), over a sample of every kind of refusal.
 */
import type { LightMyRequestResponse } from 'fastify'
import { beforeAll, expect, it } from 'vitest'
import { describeEachDatabase, type TestCloud } from '../../../support/cloud-harness.js'
import {
  basicRaw,
  createClient,
  ERROR_DESCRIPTION_CHARS,
  expectOAuthError,
  INTROSPECT,
  isOAuthProblemCode,
  oauthPost,
  REVOKE,
  type TestClient,
  TOKEN,
} from './conformance-support.js'

const GRANT = { grant_type: 'client_credentials' }

describeEachDatabase('OAuth error responses (RFC 6749 §5.2)', (cloud: TestCloud) => {
  let client: TestClient
  let errors: LightMyRequestResponse[]

  beforeAll(async () => {
    client = await createClient(cloud, await cloud.createTenant(), ['employees:read'])
    const asClient = { auth: 'basic', client } as const
    const wrongSecret = { auth: 'post', client: { ...client, clientSecret: 'nope' } } as const
    errors = [
      await oauthPost(cloud.app, TOKEN, { params: {}, client: asClient }),
      await oauthPost(cloud.app, TOKEN, { params: { grant_type: 'password' }, client: asClient }),
      await oauthPost(cloud.app, TOKEN, { params: { ...GRANT, scope: 'attendance:read' }, client: asClient }),
      await oauthPost(cloud.app, TOKEN, { params: { ...GRANT, scope: '' }, client: asClient }),
      await oauthPost(cloud.app, TOKEN, {
        params: { ...GRANT, scope: 'employees:read "q" \\ é' },
        client: asClient,
      }),
      await oauthPost(cloud.app, TOKEN, { params: GRANT, headers: { authorization: 'Basic ***' } }),
      await oauthPost(cloud.app, TOKEN, { params: GRANT, headers: { authorization: basicRaw('no-colon') } }),
      await oauthPost(cloud.app, TOKEN, { params: GRANT }),
      await oauthPost(cloud.app, TOKEN, { params: GRANT, client: wrongSecret }),
      await oauthPost(cloud.app, TOKEN, {
        params: [
          ['grant_type', 'a'],
          ['grant_type', 'b'],
        ],
        client: asClient,
      }),
      await cloud.app.inject({
        method: 'POST',
        url: TOKEN,
        headers: { 'content-type': 'text/plain' },
        payload: 'x',
      }),
      await oauthPost(cloud.app, REVOKE, { client: asClient }),
      await oauthPost(cloud.app, REVOKE, { params: { token: 'x' }, client: wrongSecret }),
      await oauthPost(cloud.app, INTROSPECT, { params: { token: 'x' } }),
      await oauthPost(cloud.app, INTROSPECT, {
        params: { token: 'x' },
        headers: { origin: 'https://app.example' },
      }),
    ]
  })

  it('are JSON objects with error, error_description and our RFC 9457 members, never cached', () => {
    expect(new Set(errors.map((res) => res.json().error)).size, 'a variety of errors').toBeGreaterThan(3)
    for (const res of errors) {
      const body = res.json() as Record<string, unknown>
      expect(isOAuthProblemCode(String(body.error), body.code), res.body).toBe(true)
      expectOAuthError(res, res.statusCode, body.error as 'invalid_request', String(body.code))
      // invalid_client is the 401, and the only one.
      expect(res.statusCode === 401, res.body).toBe(body.error === 'invalid_client')
    }
  })

  it('keep error_description to the characters §5.2 allows (printable ASCII but " and \\)', () => {
    const offending = errors
      .map((res) => String((res.json() as Record<string, unknown>).error_description))
      .filter((description) => !ERROR_DESCRIPTION_CHARS.test(description))
    expect(offending).toEqual([])
  })

  it('keep the RFC 9457 title the same for every occurrence of an error (RFC 9457 §3.1.3)', () => {
    // The title "SHOULD NOT change from occurrence to occurrence of the problem".
    const titles = new Map<string, Set<string>>()
    for (const res of errors) {
      const body = res.json() as Record<string, unknown>
      const seen = titles.get(String(body.code)) ?? new Set<string>()
      seen.add(String(body.title))
      titles.set(String(body.code), seen)
    }
    for (const [code, seen] of titles) expect([...seen], code).toHaveLength(1)
  })

  it('carry the specifics in the RFC 9457 detail, as every other problem of ours does', () => {
    for (const res of errors) {
      const body = res.json() as Record<string, unknown>
      expect(body.detail, res.body).toBe(body.error_description)
    }
  })
})
