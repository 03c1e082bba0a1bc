import {
  type FieldError,
  PROBLEM_CATALOG,
  type Problem,
  type ProblemCode,
  problemType,
} from '../shared/problem.js'

export interface AppErrorOptions {
  /** Overrides the catalog status where the same code means something else here. */
  status?: number
  errors?: FieldError[]
  /** Response headers the problem needs (`WWW-Authenticate`, `Retry-After`). */
  headers?: Record<string, string>
}

/**
 * The one error type services throw for a client-visible failure. The error handler turns it into an
 * RFC 9457 problem; anything else becomes a bare 500.
 */
export class AppError extends Error {
  readonly status: number
  readonly code: ProblemCode
  readonly title: string
  readonly detail: string | undefined
  readonly errors: FieldError[] | undefined
  readonly headers: Record<string, string> | undefined

  constructor(code: ProblemCode, detail?: string, options: AppErrorOptions = {}) {
    super(detail ?? PROBLEM_CATALOG[code].title)
    this.name = 'AppError'
    this.code = code
    this.status = options.status ?? PROBLEM_CATALOG[code].status
    this.title = PROBLEM_CATALOG[code].title
    this.detail = detail
    this.errors = options.errors
    this.headers = options.headers
  }
}

/** The RFC 9457 body for an AppError. `instance` names the request, so support can find its logs. */
export function toProblem(error: AppError, requestId?: string): Problem {
  const problem: Problem = {
    type: problemType(error.code),
    title: error.title,
    status: error.status,
    code: error.code,
  }
  if (error.detail !== undefined) problem.detail = error.detail
  if (requestId !== undefined) problem.instance = `urn:hajri:request:${requestId}`
  if (error.errors !== undefined) problem.errors = error.errors
  return problem
}
