import type { FastifyRequest } from 'fastify'
import { type LiveCredentialCheck, liveCredentialCheck } from '../auth/auth-context.js'

/**
 * A read on a route flagged `liveCredentialCheckedByRead`: when the caller came from the cache,
 * `cached` reads with a statement that also checks the credential is still live, and its answer is
 * the response. When that finds nothing (nothing to read, or the credential no longer live) the
 * credential is looked up (a 401 if it is no longer live) and `full` answers, as it does for a caller
 * looked up on this request (docs/decisions/0094-reads-check-a-cached-credential.md).
 */
export async function readForCachedCaller<T>(
  request: FastifyRequest,
  cached: (caller: LiveCredentialCheck) => Promise<T | undefined>,
  full: () => Promise<T>,
): Promise<T> {
  const caller = liveCredentialCheck(request.auth)
  if (caller) {
    const found = await cached(caller)
    if (found !== undefined) return found
    await request.verifiedAuth()
  }
  return full()
}
