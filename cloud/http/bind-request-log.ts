import type { FastifyBaseLogger } from 'fastify'

type Bindings = Record<string, unknown>

/**
 * Adds who is calling (tenant, credential or actor) to a request's log lines. Fastify already made
 * the request a child logger of its own, so the bindings are set on it in place: a second child per
 * request costs pino a copy of its bindings, serializers and redaction, which was about a sixth of
 * the punch path's CPU as `serve` runs it (docs/development/benchmarks.md). A logger without
 * `setBindings` (logging off, or an injected one) gets a child instead.
 */
export function bindRequestLog(log: FastifyBaseLogger, bindings: Bindings): FastifyBaseLogger {
  const pinoChild = log as FastifyBaseLogger & { setBindings?: (bindings: Bindings) => void }
  if (typeof pinoChild.setBindings !== 'function') return log.child(bindings)
  pinoChild.setBindings(bindings)
  return log
}
