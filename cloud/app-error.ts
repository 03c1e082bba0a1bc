import {
  answeredCode,
  type FieldError,
  PROBLEM_CATALOG,
  type Problem,
  type ProblemCode,
  problemStatus,
  problemType,
} from '../shared/problem.js'

export interface AppErrorOptions {
  errors?: FieldError[]
  /** When trying again can succeed, in whole seconds (a lockout, a full allowance, a lost race). */
  retryAfterSeconds?: number
}

/**
 * The one error type services throw for a client-visible failure: a domain error, with no HTTP in it
 * (docs/development/architecture.md#errors). The error handler turns it into an RFC 9457 problem,
 * its status from the code; anything else becomes a bare 500.
 */
export class AppError extends Error {
  readonly code: ProblemCode
  readonly title: string
  readonly detail: string | undefined
  readonly errors: FieldError[] | undefined
  readonly retryAfterSeconds: number | undefined

  constructor(code: ProblemCode, detail?: string, options: AppErrorOptions = {}) {
    super(detail ?? PROBLEM_CATALOG[code].title)
    this.name = 'AppError'
    this.code = code
    this.title = PROBLEM_CATALOG[code].title
    this.detail = detail
    this.errors = options.errors
    this.retryAfterSeconds = options.retryAfterSeconds
  }
}

/**
 * The RFC 9457 body for an AppError. `instance` names the request, so support can find its logs. The
 * status is the code's, unless HTTP itself decided another (a framework's client error).
 */
export function toProblem(error: AppError, requestId?: string, status = problemStatus(error.code)): Problem {
  const code = answeredCode(error.code)
  const problem: Problem = { type: problemType(code), title: error.title, status, code }
  if (error.detail !== undefined) problem.detail = error.detail
  if (requestId !== undefined) problem.instance = `urn:hajri:request:${requestId}`
  if (error.errors !== undefined) problem.errors = error.errors
  return problem
}
