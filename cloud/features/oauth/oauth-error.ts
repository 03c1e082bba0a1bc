import type { OAuthErrorBody } from '../../../shared/oauth.js'
import { answeredCode, PROBLEM_CATALOG, type ProblemCode, problemType } from '../../../shared/problem.js'
import type { HttpProblem } from '../../http/http-problem.js'

/** RFC 6749 §5.2 error codes, and RFC 7009 §2.2.1's. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'
  | 'temporarily_unavailable'
  | 'server_error'

/** An error the OAuth endpoints answer in the OAuth shape rather than as a plain problem. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
    readonly headers: Record<string, string> = {},
    /** The stable problem code, when the error began as one (`rate_limited`, `browser_origin_forbidden`). */
    readonly problemCode?: string,
  ) {
    super(description)
    this.name = 'OAuthError'
  }
}

/** A fixed title per OAuth error code (RFC 9457 §3.1.3: the title does not change between occurrences). */
const TITLES: Record<OAuthErrorCode, string> = {
  invalid_request: 'The OAuth request is not valid',
  invalid_client: 'Client authentication failed',
  invalid_grant: 'The grant is not valid',
  unauthorized_client: 'The client may not do this',
  unsupported_grant_type: 'The grant type is not supported',
  invalid_scope: 'The scope is not valid',
  unsupported_token_type: 'The token type is not supported',
  temporarily_unavailable: 'Try again later',
  server_error: 'Internal error',
}

/** RFC 6749 §5.2: error_description is printable ASCII without `"` and `\`; anything else becomes `?`. */
function asDescription(text: string): string {
  return text.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '?')
}

/**
 * The body of an OAuth error: RFC 6749 §5.2's `error` and `error_description`, with the RFC 9457
 * members beside them, so OAuth libraries and our own tooling both read it. Both RFCs allow extra
 * members; the media type is application/json, as RFC 6749 requires.
 */
export function oauthErrorBody(error: OAuthError, requestId: string): OAuthErrorBody {
  const code = error.problemCode ?? `oauth_${error.error}`
  const description = asDescription(error.description)
  return {
    error: error.error,
    error_description: description,
    type: problemType(code),
    title: TITLES[error.error],
    status: error.status,
    detail: description,
    code,
    instance: `urn:hajri:request:${requestId}`,
  }
}

// Problems raised before an OAuth route's handler (parsing, limits) and the OAuth error each is.
const FROM_PROBLEM: Partial<Record<ProblemCode, 'temporarily_unavailable'>> = {
  rate_limited: 'temporarily_unavailable',
  service_unavailable: 'temporarily_unavailable',
}

/** The OAuth error a problem is, with the status and headers the HTTP layer mapped it to. */
export function fromProblem({ error, status, headers }: HttpProblem): OAuthError {
  if (status >= 500) return new OAuthError('server_error', PROBLEM_CATALOG.internal_error.title, status)
  // The OAuth endpoints take form bodies first (RFC 6749 §4.4.2), unlike the rest of the API.
  const description =
    error.code === 'unsupported_media_type'
      ? 'Send the body as application/x-www-form-urlencoded (or application/json).'
      : (error.detail ?? error.title)
  return new OAuthError(
    FROM_PROBLEM[error.code] ?? 'invalid_request',
    description,
    status,
    headers,
    answeredCode(error.code),
  )
}
