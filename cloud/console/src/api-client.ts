import type { Problem } from '../../../shared/problem.js'
import { problemMessage } from './problem-message.js'

/** A request the server refused, or could not be sent: `message` is written for a person. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problem?: Problem,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export type Query = Record<string, string | number | undefined>

interface RequestOptions {
  query?: Query
  /** Sent as JSON, unless `contentType` says otherwise (then it must be a string). */
  body?: unknown
  contentType?: string
}

/** Paths under which a 401 is an answer (wrong password), not the end of the session. */
const SESSION_PATHS = ['/session']

/**
 * The console's only way to the server: the console API (/api/console/v1) with the session
 * cookie (sent by the browser, HttpOnly) and, on every state change, the X-CSRF-Token header. Problems
 * (RFC 9457) become {@link ApiError}s whose message a person can act on.
 */
export class ApiClient {
  private csrfToken: string | undefined
  /** Called when a request finds the session gone (expired, signed out elsewhere). */
  onSessionEnded: ((error: ApiError) => void) | undefined

  constructor(private readonly base = '/api/console/v1') {}

  setCsrfToken(token: string | undefined): void {
    this.csrfToken = token
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query })
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body })
  }

  postText<T>(path: string, text: string, contentType: string): Promise<T> {
    return this.request<T>('POST', path, { body: text, contentType })
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body })
  }

  delete<T = void>(path: string): Promise<T> {
    return this.request<T>('DELETE', path, {})
  }

  /** A path outside the console API (the public event catalog), without credentials. */
  async getPublic<T>(url: string): Promise<T> {
    return this.send<T>(url, { method: 'GET', credentials: 'omit', headers: { accept: 'application/json' } })
  }

  private async request<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' }
    let body: string | undefined
    if (options.body !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/json'
      body = options.contentType ? String(options.body) : JSON.stringify(options.body)
    }
    if (method !== 'GET' && method !== 'HEAD' && this.csrfToken) headers['x-csrf-token'] = this.csrfToken
    try {
      return await this.send<T>(this.base + path + queryString(options.query), {
        method,
        headers,
        body,
        credentials: 'same-origin',
      })
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && !SESSION_PATHS.some((p) => path.startsWith(p))) {
        this.onSessionEnded?.(err)
      }
      throw err
    }
  }

  private async send<T>(url: string, init: RequestInit): Promise<T> {
    let response: Response
    try {
      response = await fetch(url, init)
    } catch {
      throw new ApiError(
        0,
        'network_error',
        'The Hajri server could not be reached. Check your connection, then try again.',
      )
    }
    const text = await response.text()
    if (response.ok) return (text === '' ? undefined : JSON.parse(text)) as T
    let problem: Problem | undefined
    try {
      const parsed = JSON.parse(text) as Problem
      if (typeof parsed?.code === 'string') problem = parsed
    } catch {
      // Not a problem document (a proxy's error page): described by its status alone.
    }
    const retryAfter = Number(response.headers.get('retry-after'))
    throw new ApiError(
      response.status,
      problem?.code ?? `http_${response.status}`,
      problemMessage(response.status, problem, Number.isFinite(retryAfter) ? retryAfter : undefined),
      problem,
    )
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return ''
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, String(value))
  }
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}

/** The message of whatever an action threw, for a person. */
export function errorMessage(err: unknown): string {
  if (err instanceof ApiError) return err.message
  return 'Something went wrong in the console. Reload the page and try again.'
}
