// autocannon 8 ships no types and @types/autocannon is not a dependency: this declares the part of
// its API (README "API") that the benchmarks use, so they stay type-checked under strict mode.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  namespace autocannon {
    type Context = Record<string, unknown>

    interface Request {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      /** Builds each request; a falsy return restarts the sequence. */
      setupRequest?: (request: Request, context: Context) => Request | undefined
      onResponse?: (
        status: number,
        body: string,
        context: Context,
        headers: Record<string, string | string[]>,
      ) => void
    }

    interface Options {
      url: string
      connections?: number
      /** Seconds. */
      duration?: number
      amount?: number
      pipelining?: number
      /** Seconds. */
      timeout?: number
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      requests?: Request[]
      title?: string
      bailout?: number
    }

    /** hdr-histogram-percentiles-obj: latencies in ms, request counts per second. */
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p97_5: number
      p99: number
      p99_9: number
    }

    interface Result {
      title?: string
      url: string
      requests: Histogram & { sent: number }
      latency: Histogram
      throughput: Histogram
      /** Seconds, to the hundredth. */
      duration: number
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      resets: number
      '1xx': number
      '2xx': number
      '3xx': number
      '4xx': number
      '5xx': number
      statusCodeStats: Record<string, { count: number }>
      start: Date
      finish: Date
      connections: number
      pipelining: number
    }

    interface Instance extends EventEmitter, Promise<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance

  export default autocannon
}
