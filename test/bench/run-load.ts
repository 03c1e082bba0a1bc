import autocannon from 'autocannon'

export interface LoadOptions {
  /** Full URL of the route. */
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  /** Authorization headers sent in turn, one a request (several keys, so that no key's limit is reached). */
  authorizations?: readonly string[]
  connections: number
  seconds: number
  /** A fresh body per request, so that no request repeats another (a repeat is a different code path). */
  nextBody: () => string
  /** Sees every response body, e.g. to count what a batch stored. */
  onResponse?: (status: number, body: string) => void
  timeoutSeconds?: number
}

export interface LoadResult {
  seconds: number
  /** 2xx responses. */
  ok: number
  non2xx: number
  /** Connection errors and timeouts. */
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  /** 2xx responses per second of the run. */
  okPerSecond: number
  latencyMs: { average: number; p50: number; p90: number; p99: number; max: number }
  /** The first non-2xx body, to tell why a run measured an error path. */
  errorSample: string | undefined
}

/** One autocannon run (HTTP/1.1 keep-alive, no pipelining) in this process, summarised. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let errorSample: string | undefined
  let sent = 0
  const { onResponse, authorizations } = options
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    pipelining: 1,
    duration: options.seconds,
    timeout: options.timeoutSeconds ?? 10,
    requests: [
      {
        method: options.method,
        headers: options.headers,
        setupRequest: (request) => {
          const body = options.nextBody()
          if (!authorizations?.length) return { ...request, body }
          const authorization = authorizations[sent++ % authorizations.length] as string
          return { ...request, headers: { ...request.headers, authorization }, body }
        },
        onResponse: (status, body) => {
          if ((status < 200 || status > 299) && errorSample === undefined) errorSample = `${status} ${body}`
          onResponse?.(status, body)
        },
      },
    ],
  })
  const statusCodes: Record<string, number> = {}
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count
  return {
    seconds: result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    okPerSecond: result['2xx'] / result.duration,
    latencyMs: {
      average: result.latency.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
    },
    errorSample,
  }
}
