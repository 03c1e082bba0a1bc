/**
 * Shared by the OAuth conformance tests (docs/decisions/0016-oauth-client-credentials.md): requests to the
 * OAuth endpoints built the way the RFCs describe them, independently of the server's own parsing code, and
 * the checks every OAuth answer must pass.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'
import { PROBLEM_CATALOG } from '../../../../shared/problem.js'
import type { Scope } from '../../../../shared/scopes.js'
import { TEST_ACTOR, type TestCloud } from '../../../support/cloud-harness.js'

export const TOKEN = '/api/oauth/token'
export const REVOKE = '/api/oauth/revoke'
export const INTROSPECT = '/api/oauth/introspect'
export const METADATA = '/.well-known/oauth-authorization-server'
export const EMPLOYEES = '/api/public/v1/employees'
export const PUNCHES = '/api/public/v1/attendance/punches'

export const SECOND = 1_000_000
export const FORM_TYPE = 'application/x-www-form-urlencoded'

/** A client id that needs form-encoding in every way RFC 6749 Appendix B has: space, +, %, &, =, /, :. */
export const AWKWARD_CLIENT_ID = 'hr payroll:sync+1%&=/'

/** RFC 6749 §5.2 error codes, and RFC 7009 §2.2.1's. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'unsupported_token_type',
] as const

/** RFC 6749 §5.2: error_description is %x20-21 / %x23-5B / %x5D-7E (printable ASCII but " and \). */
export const ERROR_DESCRIPTION_CHARS = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/

export interface TestClient {
  /** The app's id (`app_...`), as the audit log names it. */
  id: string
  clientId: string
  clientSecret: string
}

export async function createClient(
  cloud: TestCloud,
  tenantId: string,
  scopes: Scope[],
  clientId?: string,
): Promise<TestClient> {
  return cloud.services.oauthApps.create(
    tenantId,
    { name: `client ${clientId ?? 'generated'}`, scopes, rateLimitPerMinute: 100_000, clientId },
    TEST_ACTOR,
  )
}

/**
 * RFC 6749 Appendix B: application/x-www-form-urlencoded, as URLSearchParams writes it (a space
 * is "+", everything but A-Z a-z 0-9 * - . _ is %XX of its UTF-8 bytes).
 */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2)
}

/** A form body: pairs in order, so a parameter may be repeated. */
export function form(pairs: Record<string, string> | [string, string][]): string {
  return new URLSearchParams(Array.isArray(pairs) ? pairs : Object.entries(pairs)).toString()
}

/** RFC 6749 §2.3.1: each half form-encoded, joined by ":", then base64 (RFC 7617). */
export function basic(clientId: string, clientSecret: string): string {
  return basicRaw(`${formEncode(clientId)}:${formEncode(clientSecret)}`)
}

/** Basic credentials exactly as given, without the §2.3.1 encoding of each half. */
export function basicRaw(userPass: string): string {
  return `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`
}

export interface OAuthRequest {
  /** Body parameters, sent form-encoded unless `json` is set. */
  params?: Record<string, string> | [string, string][]
  /** Client authentication: HTTP Basic (client_secret_basic) or body parameters (client_secret_post). */
  client?: { auth: 'basic' | 'post'; client: TestClient }
  json?: boolean
  headers?: Record<string, string>
}

export function oauthPost(
  app: FastifyInstance,
  url: string,
  request: OAuthRequest = {},
): Promise<LightMyRequestResponse> {
  const pairs: [string, string][] = Array.isArray(request.params)
    ? [...request.params]
    : Object.entries(request.params ?? {})
  const headers: Record<string, string> = { ...request.headers }
  if (request.client?.auth === 'basic') {
    headers.authorization = basic(request.client.client.clientId, request.client.client.clientSecret)
  } else if (request.client?.auth === 'post') {
    pairs.push(
      ['client_id', request.client.client.clientId],
      ['client_secret', request.client.client.clientSecret],
    )
  }
  const payload = request.json ? JSON.stringify(Object.fromEntries(pairs)) : form(pairs)
  headers['content-type'] ??= request.json ? 'application/json' : FORM_TYPE
  return app.inject({ method: 'POST', url, headers, payload })
}

export interface TokenBody {
  access_token: string
  token_type: string
  expires_in: number
  scope: string
}

/** A token for the client, by HTTP Basic; fails the test unless it is issued. */
export async function issueToken(
  app: FastifyInstance,
  client: TestClient,
  scope?: string,
): Promise<TokenBody> {
  const res = await oauthPost(app, TOKEN, {
    params: { grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) },
    client: { auth: 'basic', client },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json() as TokenBody
}

/** RFC 6749 §5.1: "Cache-Control: no-store" and "Pragma: no-cache" on token (and error) responses. */
export function expectNoStore(res: LightMyRequestResponse): void {
  expect(res.headers['cache-control']).toBe('no-store')
  expect(res.headers.pragma).toBe('no-cache')
}

/**
 * An RFC 6749 §5.2 error: application/json (not problem+json: OAuth libraries require JSON) with
 * `error` and `error_description`, and our RFC 9457 members beside them. The problem `code` is
 * `oauth_<error>`, or the stable code of the problem the error began as (`malformed_json`,
 * `unsupported_media_type`, `browser_origin_forbidden`...); `code` says which, when a test knows.
 */
export function expectOAuthError(
  res: LightMyRequestResponse,
  status: number,
  error: (typeof OAUTH_ERROR_CODES)[number],
  code: string = `oauth_${error}`,
): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status)
  expect(res.headers['content-type']).toMatch(/^application\/json\b/)
  expectNoStore(res)
  const body = res.json() as Record<string, unknown>
  expect(body.error).toBe(error)
  expect(typeof body.error_description).toBe('string')
  expect(body).toMatchObject({
    type: `urn:hajri:problem:${code}`,
    code,
    status,
    instance: `urn:hajri:request:${String(res.headers['x-request-id'])}`,
  })
  expect(typeof body.title).toBe('string')
  return body
}

/** The problem code an OAuth error may carry: `oauth_<error>`, or one from the problem catalog. */
export function isOAuthProblemCode(error: string, code: unknown): boolean {
  return code === `oauth_${error}` || (typeof code === 'string' && code in PROBLEM_CATALOG)
}

/** A GET on the public API with a bearer credential. */
export function getEmployees(app: FastifyInstance, token: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'GET', url: EMPLOYEES, headers: { authorization: `Bearer ${token}` } })
}

/** RFC 6750 §3.1: a token that is not (or no longer) valid is a 401 with error="invalid_token". */
export function expectInvalidToken(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(401)
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
  expect(res.json()).toMatchObject({ status: 401, code: 'invalid_credential' })
  expect(res.headers['www-authenticate']).toBe('Bearer realm="hajri", error="invalid_token"')
}
