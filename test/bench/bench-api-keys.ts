import { openDatabase } from '../../cloud/db/database.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createServices } from '../../cloud/services.js'
import type { Scope } from '../../shared/scopes.js'

/**
 * More keys of a bench tenant, each with the highest limit there is. A load generator that cycles
 * through them has each key's limiter count every request and refuse none: one key's limit
 * (MAX_RATE_LIMIT_PER_MINUTE a minute) is less than a minute of a fast server's load. Every key
 * costs the same to check, so the measure is that of one key.
 */
export async function createBenchApiKeys(
  url: string,
  tenantId: string,
  count: number,
  scopes: Scope[],
): Promise<string[]> {
  const handle = openDatabase(url)
  try {
    const services = createServices(handle)
    const keys: string[] = []
    for (let i = 0; i < count; i++) {
      const { key } = await services.apiKeys.create(
        tenantId,
        { name: `bench ${i}`, scopes, rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE },
        { name: 'bench', ip: null },
      )
      keys.push(key)
    }
    return keys
  } finally {
    await handle.close()
  }
}
