import { Redis } from 'ioredis'

/**
 * The Redis client for shared rate-limit counters. Commands fail at once while Redis is away
 * (no offline queue), so a request is never held waiting for it: the limiter lets it through.
 */
export function openRedis(url: string, onError: (err: Error) => void): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  redis.on('error', onError)
  return redis
}
