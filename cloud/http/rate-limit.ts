import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import { AppError } from '../app-error.js'

export interface RateLimitSettings {
  /** Shared counters for every instance; without it, each instance counts on its own. */
  redis?: Redis
  /** Keeps the counters of different limiters apart in Redis. */
  nameSpace: string
}

/** The settings of one limiter's counters: in Redis when there is one, in memory otherwise. */
export function rateLimitSettings(nameSpace: string, redis: Redis | undefined): RateLimitSettings {
  return { nameSpace, ...(redis ? { redis } : {}) }
}

const LIMIT = 'ratelimit-limit'
const REMAINING = 'ratelimit-remaining'
const RESET = 'ratelimit-reset'

/**
 * @fastify/rate-limit with Hajri's conventions (docs/decisions/0012-per-credential-rate-limits.md): IETF
 * draft headers `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, a 429 with `Retry-After` and the
 * problem `rate_limited`, one-minute windows. If Redis fails, requests are let through and the failure
 * logged: a limit protects the service, and refusing punches because a cache is down would not.
 *
 * While requests are let through uncounted, no `RateLimit-*` header is sent: the plugin would still
 * send them, with the whole limit remaining, promising a limit that is not being kept. A request
 * that was counted always has less than the limit remaining (the count includes it), so a
 * remainder equal to the limit means the count failed.
 */
export async function registerRateLimit(
  app: FastifyInstance,
  settings: RateLimitSettings,
  options: Pick<RateLimitPluginOptions, 'global' | 'hook' | 'max' | 'keyGenerator'>,
): Promise<void> {
  await app.register(rateLimit, {
    ...options,
    timeWindow: 60_000,
    enableDraftSpec: true,
    skipOnError: true,
    nameSpace: settings.nameSpace,
    ...(settings.redis ? { redis: settings.redis } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `More than ${context.max} requests a minute. Retry in ${context.after}.`),
  })
  app.addHook('onSend', async (_request, reply) => {
    const limit = reply.getHeader(LIMIT)
    if (limit === undefined || String(limit) !== String(reply.getHeader(REMAINING))) return
    reply.removeHeader(LIMIT)
    reply.removeHeader(REMAINING)
    reply.removeHeader(RESET)
  })
}
