import { problemStatus } from '../../shared/problem.js'
import type { AppError } from '../app-error.js'

/**
 * An AppError as HTTP answers it (docs/development/architecture.md#errors): the status its code maps
 * to in the catalog (shared/problem.ts), and the headers its facts call for.
 */
export interface HttpProblem {
  error: AppError
  status: number
  headers: Record<string, string>
}

export interface HttpFacts {
  /** Only where HTTP itself decided the status (a framework's own client error); otherwise the code's. */
  status?: number
  /** The WWW-Authenticate challenge of an authentication failure (RFC 9110 §11.6.1). */
  challenge?: string
}

export function httpProblem(error: AppError, facts: HttpFacts = {}): HttpProblem {
  const headers: Record<string, string> = {}
  if (facts.challenge !== undefined) headers['www-authenticate'] = facts.challenge
  // RFC 9110 §10.2.3: delay-seconds.
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds)
  return { error, status: facts.status ?? problemStatus(error.code), headers }
}
