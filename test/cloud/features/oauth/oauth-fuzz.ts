/**
 * What test/system/cloud/fuzz.test.ts needs for the OAuth endpoints
 * (docs/decisions/0016-oauth-client-credentials.md): clients, tokens and near-valid
 * OAuth parameters to start from, and the checks of their answers. These endpoints answer errors in
 * the RFC 6749 §5.2 shape (application/json, `error`, `error_description`), with our RFC 9457
 * members beside, not as application/problem+json: OAuth client libraries require it.
 */
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { ACCESS_TOKEN, generateSecret } from '../../../../cloud/auth/secret-format.js'
import { SCOPES } from '../../../../shared/scopes.js'
import { TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'
import {
  FORM_CONTENT_TYPE,
  type FuzzContext,
  type FuzzRequest,
  formEncode,
} from '../../../support/request-arbitrary.js'
import { clientAuthenticationArbitrary } from './client-authentication-arbitrary.js'
import {
  AWKWARD_CLIENT_ID,
  ERROR_DESCRIPTION_CHARS,
  INTROSPECT,
  isOAuthProblemCode,
  OAUTH_ERROR_CODES,
  REVOKE,
  TOKEN,
} from './conformance-support.js'

/** The OAuth endpoints answer in the RFC 6749 §5.2 shape, not as problems
 * (docs/decisions/0039-oauth-error-shape.md).
 */
export const isOAuthRoute = (route: { url: string }): boolean => route.url.startsWith('/api/oauth/')

// RFC 6749 §5.2: 400, or 401 for invalid_client; HTTP's own refusals (an Origin, a body too large,
// a media type not taken, a rate limit) keep their status, with an OAuth error code.
const OAUTH_STATUSES = [400, 401, 403, 413, 415, 429]

export interface OAuthFuzzFixtures {
  /** A live token with every scope, for the public routes. */
  accessToken: string
  /** Bearer credentials that must be refused: a tampered token, a revoked one, a client secret. */
  refusedBearers: string[]
  /** Every credential set up here: no response may echo one (a token response has a new one). */
  secrets: string[]
  /** The clients the fuzz authenticates as. */
  clientIds: string[]
  /** The OAuth context: the public one, with OAuth parameters and client authentication. */
  context(base: FuzzContext): FuzzContext
}

/**
 * OAuth clients in `tenantId`: one with every scope, one whose chosen id needs form-encoding, one of
 * another tenant; and two that look like clients but must be refused: a revoked app, and a secret
 * rotated out with no grace. Tokens of each, one of them revoked.
 */
export async function setUpOAuthFuzz(
  cloud: TestCloud,
  tenantId: string,
  apiKey: string,
): Promise<OAuthFuzzFixtures> {
  const apps = cloud.services.oauthApps
  const newApp = (tenant: string, scopes: string[], clientId?: string) =>
    apps.create(tenant, { name: 'fuzz', scopes, rateLimitPerMinute: 100_000, clientId }, TEST_ACTOR)
  const full = await newApp(tenantId, [...SCOPES])
  const awkward = await newApp(tenantId, ['employees:read'], AWKWARD_CLIENT_ID)
  const stranger = await newApp(await cloud.createTenant(), ['employees:read'])
  const revokedApp = await newApp(tenantId, ['employees:read'])
  await apps.revoke(tenantId, revokedApp.id, TEST_ACTOR)
  const rotatedApp = await newApp(tenantId, ['employees:read'])
  const rotated = await apps.rotateSecret(tenantId, rotatedApp.id, TEST_ACTOR, 0)

  const basic = (c: { clientId: string; clientSecret: string }) =>
    `Basic ${Buffer.from(`${formEncode(c.clientId)}:${formEncode(c.clientSecret)}`).toString('base64')}`
  const operation = async (url: string, c: { clientId: string; clientSecret: string }, body: string) => {
    const res = await cloud.app.inject({
      method: 'POST',
      url,
      headers: { authorization: basic(c), 'content-type': FORM_CONTENT_TYPE },
      payload: body,
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json() as { access_token: string }
  }
  const issue = async (c: { clientId: string; clientSecret: string }) =>
    (await operation(TOKEN, c, 'grant_type=client_credentials')).access_token
  const accessToken = await issue(full)
  const liveTokens = [await issue(full), await issue(full), await issue(awkward), await issue(stranger)]
  const revokedToken = await issue(full)
  await operation(REVOKE, full, `token=${revokedToken}`)
  const tampered = `${accessToken.slice(0, -1)}${accessToken.endsWith('A') ? 'B' : 'A'}`
  const clientSecrets = [full, awkward, stranger, revokedApp, rotatedApp, rotated].map((c) => c.clientSecret)

  return {
    accessToken,
    refusedBearers: [tampered, revokedToken, full.clientSecret],
    secrets: [apiKey, accessToken, ...liveTokens, revokedToken, ...clientSecrets],
    clientIds: [full.clientId, awkward.clientId],
    context: (base) => ({
      ...base,
      hints: {
        ...base.hints,
        grant_type: fc.oneof(
          { weight: 8, arbitrary: fc.constant('client_credentials') },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              ...['password', 'authorization_code', 'refresh_token', 'CLIENT_CREDENTIALS'],
              ...[
                'urn:ietf:params:oauth:grant-type:jwt-bearer',
                '',
                'client_credentials ',
                'client_credentials\u0000',
              ],
            ),
          },
        ),
        scope: fc.oneof(
          {
            weight: 6,
            arbitrary: fc.constantFrom('employees:read', 'employees:read attendance:write', SCOPES.join(' ')),
          },
          {
            weight: 2,
            arbitrary: fc.constantFrom(
              ...[
                '',
                ' ',
                'admin',
                'openid',
                'employees:read  employees:read',
                'employees:read,attendance:read',
              ],
              ...['EMPLOYEES:READ', 'employees:*', 'employees:read\u0000', 'employees:read é', 'a"b\\c'],
            ),
          },
        ),
        token: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...liveTokens) },
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              revokedToken,
              tampered,
              generateSecret(ACCESS_TOKEN),
              apiKey,
              full.clientSecret,
            ),
          },
          { weight: 1, arbitrary: fc.constantFrom('', 'hja_', 'x'.repeat(1024), 'x'.repeat(1025)) },
        ),
        token_type_hint: fc.constantFrom('access_token', 'refresh_token', 'something_else', ''),
      },
      clientAuthentication: clientAuthenticationArbitrary({
        clients: [full, awkward],
        refused: [revokedApp, rotatedApp],
        bearer: [apiKey, accessToken],
      }),
    }),
  }
}

/**
 * The checks of the OAuth endpoints' answers, beyond what every route must do, with the error codes
 * seen per route (to show the fuzz reached authentication and the handlers) and examples of
 * descriptions outside RFC 6749 §5.2's characters (reported once all routes ran).
 */
export class OAuthResponseChecks {
  readonly errors = new Map<string, Map<string, number>>()
  readonly badDescriptions = new Set<string>()

  /** The clients the fuzz authenticates as: introspection may describe their tokens only. */
  constructor(private readonly clientIds: readonly string[]) {}

  /** RFC 6749 §5.1: token responses, and errors, are never cached. */
  expectNoStore(res: LightMyRequestResponse): void {
    expect(res.headers['cache-control'], 'Cache-Control: no-store').toBe('no-store')
    expect(res.headers.pragma, 'Pragma: no-cache').toBe('no-cache')
  }

  /** What a 200 from an OAuth endpoint may say, beyond its schema. */
  expectSuccess(route: { url: string }, body: Record<string, unknown>): void {
    if (route.url === TOKEN) {
      expect(body.access_token).toMatch(/^hja_[0-9A-Za-z]{46}$/)
      expect(body.expires_in).toBe(3600)
      for (const scope of String(body.scope).split(' ')) expect(SCOPES as readonly string[]).toContain(scope)
    }
    if (route.url === INTROSPECT && body.active === true) {
      // RFC 7662 §4: only the client's own tokens are described.
      expect(this.clientIds).toContain(body.client_id)
      expect(body.exp).toBe((body.iat as number) + 3600)
    }
  }

  /**
   * An RFC 6749 §5.2 error: application/json, an error code the RFCs define and a description, with
   * the RFC 9457 members beside them.
   */
  expectError(route: { method: string; url: string }, req: FuzzRequest, res: LightMyRequestResponse): void {
    const status = res.statusCode
    expect(String(res.headers['content-type']), 'an OAuth error is application/json').toMatch(
      /^application\/json\b/,
    )
    expect(OAUTH_STATUSES, `an OAuth error status: ${res.body.slice(0, 300)}`).toContain(status)
    const body = JSON.parse(res.body) as Record<string, unknown>
    const error = String(body.error)
    // temporarily_unavailable is RFC 6749 §4.1.2.1's: we answer a rate limit with it.
    const codes: readonly string[] = status === 429 ? ['temporarily_unavailable'] : OAUTH_ERROR_CODES
    expect(codes, `an RFC 6749 §5.2 / RFC 7009 error code: ${res.body.slice(0, 300)}`).toContain(error)
    expect(error === 'invalid_client', 'invalid_client is the 401, and the only one').toBe(status === 401)
    if (status !== 400 && status !== 401 && status !== 429) expect(error).toBe('invalid_request')
    expect(typeof body.error_description).toBe('string')
    // oauth_<error>, or the stable code of the problem it began as (malformed_json, payload_too_large...).
    expect(isOAuthProblemCode(error, body.code), `a stable problem code: ${res.body.slice(0, 300)}`).toBe(
      true,
    )
    expect(body.type).toBe(`urn:hajri:problem:${String(body.code)}`)
    expect(body.status, 'status is the HTTP status').toBe(status)
    expect(typeof body.title === 'string' && body.title !== '', 'a title').toBe(true)
    expect(body.instance, 'the instance names the request').toBe(
      `urn:hajri:request:${String(res.headers['x-request-id'])}`,
    )
    // §5.2: a client that tried HTTP Basic is told which scheme to use.
    if (status === 401 && req.headers.authorization !== undefined) {
      expect(res.headers['www-authenticate'], 'a Basic challenge').toMatch(/^Basic realm=/)
    }
    const key = `${route.method} ${route.url}`
    const counts = this.errors.get(key) ?? new Map<string, number>()
    counts.set(error, (counts.get(error) ?? 0) + 1)
    this.errors.set(key, counts)
    const description = String(body.error_description)
    // A few examples are enough to act on; every one of them would be noise.
    if (!ERROR_DESCRIPTION_CHARS.test(description) && this.badDescriptions.size < 12) {
      this.badDescriptions.add(`${error}: ${description.slice(0, 120)}`)
    }
  }

  /** After a route's fuzz: authentication failed and passed, and the handler's own checks ran. */
  expectCoverage(route: { method: string; url: string }): void {
    const errors = this.errors.get(`${route.method} ${route.url}`) ?? new Map<string, number>()
    const expected = ['invalid_client', 'invalid_request']
    if (route.url === TOKEN) expected.push('invalid_scope', 'unsupported_grant_type')
    if (route.url === REVOKE) expected.push('unauthorized_client')
    for (const code of expected) expect(errors.get(code) ?? 0, `some ${code}`).toBeGreaterThan(0)
  }
}
