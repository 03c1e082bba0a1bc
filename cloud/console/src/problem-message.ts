import type { Problem, ProblemCode } from '../../../shared/problem.js'

/**
 * What to tell a person for each stable problem code (docs/development/architecture.md#errors): what happened
 * and what to do, in words that need no knowledge of the API. Codes not listed fall back to the server's own
 * detail, which is written for people too.
 */
const MESSAGES: Partial<Record<ProblemCode, string>> = {
  invalid_credentials: 'That email and password do not match. Check both and try again.',
  authentication_required: 'Your session has ended. Sign in again to continue.',
  invalid_credential: 'Your session has ended. Sign in again to continue.',
  session_expired: 'Your session has ended. Sign in again to continue.',
  csrf_failed:
    'The server could not confirm this request came from this page. Reload the page and try again.',
  insufficient_role: 'Your role can look but not change anything. Ask an owner or an admin to do this.',
  password_change_required: 'Choose a new password before you continue.',
  browser_origin_forbidden: 'This request was refused because it came from another website.',
  rate_limited: 'Too many requests in a short time. Wait a moment, then try again.',
  webhook_delivery_not_retryable:
    'Only a failed or exhausted delivery can be retried. This one has succeeded or is still waiting for its next attempt.',
  console_user_exists: 'Someone with this email already has access to this organisation.',
  last_owner: 'This is the last owner. Invite another owner before removing this one.',
  unsupported_media_type: 'The file is not in a format the server accepts.',
  payload_too_large: 'The file is too large. Split it into smaller files and import each.',
  internal_error:
    'Something went wrong on the server. Try again; if it keeps happening, tell your Hajri operator.',
  service_unavailable: 'The server is busy or starting. Try again in a minute.',
}

const NOT_FOUND =
  'It no longer exists; someone may have deleted it. Reload the list to see what is there now.'

/** The sentence to show for a refused request. */
export function problemMessage(
  status: number,
  problem: Problem | undefined,
  retryAfterSeconds?: number,
): string {
  const code = problem?.code
  if (code === 'login_locked' || (code === 'rate_limited' && retryAfterSeconds)) {
    const wait = retryAfterSeconds ? ` Try again in ${humanSeconds(retryAfterSeconds)}.` : ' Try again later.'
    return code === 'login_locked'
      ? `Too many failed sign-ins for this email from this network. Each one makes the wait longer.${wait}`
      : `Too many requests.${wait}`
  }
  if (code === 'validation_failed' || code === 'bad_request') return validationMessage(problem)
  const known = code ? MESSAGES[code as ProblemCode] : undefined
  if (known) return withRequest(known, problem, status)
  if (code?.endsWith('_not_found') || status === 404) return NOT_FOUND
  if (problem?.detail) return withRequest(problem.detail, problem, status)
  if (problem?.title) return withRequest(problem.title, problem, status)
  if (status >= 500) return withRequest(MESSAGES.internal_error as string, problem, status)
  return `The server refused this request (HTTP ${status}).`
}

function validationMessage(problem: Problem | undefined): string {
  const fields = problem?.errors ?? []
  if (fields.length === 0) return `Check what you entered: ${problem?.detail ?? 'something is not valid'}.`
  const lines = fields.map((e) => {
    const field = e.pointer.replace(/^#\/?/, '').replace(/\//g, ' › ')
    return field ? `${field}: ${e.message}` : e.message
  })
  return `Check what you entered: ${lines.join('; ')}.`
}

/** Server errors carry the request id, which an operator finds in the logs. */
function withRequest(message: string, problem: Problem | undefined, status: number): string {
  if (status < 500 || !problem?.instance) return message
  return `${message} (Reference: ${problem.instance.replace('urn:hajri:request:', '')})`
}

function humanSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.ceil(seconds)} seconds`
  const minutes = Math.ceil(seconds / 60)
  return minutes === 1 ? 'a minute' : `${minutes} minutes`
}
