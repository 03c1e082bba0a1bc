import type { ServerOptions } from 'node:http'

/**
 * How long a client may take (OWASP API4:2023: slow clients). Without these, Fastify
 * leaves `requestTimeout` and `connectionTimeout` at 0: a client trickling a body a byte at a time
 * (slowloris, "slow POST") held its connection and its parser for ever. All in milliseconds.
 */
export interface ServerTimeouts {
  /** The request line and every header must have arrived (Node `headersTimeout`); else 408 and close. */
  headersMs: number
  /**
   * The whole request, body included (Node and Fastify `requestTimeout`); else 408 and close. At the
   * default body limit (1 MiB) that is 17 KB/s, slower than a factory's worst uplink.
   */
  requestMs: number
  /** A connection with no traffic either way this long is closed (Fastify `connectionTimeout`): a client that stops reading too. */
  idleMs: number
  /**
   * An idle keep-alive connection is closed after this (Fastify `keepAliveTimeout`). Fastify's 72 s:
   * longer than the 60 s idle timeout of common load balancers, so they close first and never send
   * a request onto a connection we are closing.
   */
  keepAliveMs: number
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersMs: 15_000,
  requestMs: 60_000,
  idleMs: 120_000,
  keepAliveMs: 72_000,
}

/** The timeouts, with the defaults for any not given. */
export function serverTimeouts(given: Partial<ServerTimeouts> = {}): ServerTimeouts {
  const defined = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined))
  return { ...DEFAULT_SERVER_TIMEOUTS, ...defined }
}

/**
 * Fastify's options for the timeouts. Node checks the header and request deadlines every
 * `connectionsCheckingInterval` (30 s by default, which would let a slow client stay up to 30 s
 * past them): a quarter of the shorter deadline, between 0.1 and 5 s, keeps them close at no cost.
 */
export function serverTimeoutOptions(timeouts: ServerTimeouts): {
  connectionTimeout: number
  keepAliveTimeout: number
  requestTimeout: number
  http: ServerOptions
} {
  const { headersMs, requestMs, idleMs, keepAliveMs } = timeouts
  if (headersMs > requestMs)
    throw new Error('the headers timeout must not be longer than the request timeout')
  const connectionsCheckingInterval = Math.min(
    5_000,
    Math.max(100, Math.floor(Math.min(headersMs, requestMs) / 4)),
  )
  return {
    connectionTimeout: idleMs,
    keepAliveTimeout: keepAliveMs,
    requestTimeout: requestMs,
    http: {
      headersTimeout: headersMs,
      requestTimeout: requestMs,
      keepAliveTimeout: keepAliveMs,
      connectionsCheckingInterval,
    },
  }
}
