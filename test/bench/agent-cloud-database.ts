import { openDatabase } from '../../cloud/db/database.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createServices } from '../../cloud/services.js'
import { type BenchDatabase, createBenchDatabase } from './bench-database.js'

export interface AgentCloudDatabase extends BenchDatabase {
  /** The agent's OAuth client (client credentials, attendance:write), as an admin would create it. */
  clientId: string
  clientSecret: string
}

/**
 * A seeded cloud database (bench-database.ts: tenant, ACTIVE employees E000001…) plus the OAuth app
 * the agent authenticates with, at the highest rate limit there is: the benchmarks measure the
 * agent and the cloud, not the limiter.
 */
export async function createAgentCloudDatabase(employees: number): Promise<AgentCloudDatabase> {
  const database = await createBenchDatabase(employees)
  try {
    const handle = openDatabase(database.url)
    try {
      const app = await createServices(handle).oauthApps.create(
        database.tenantId,
        {
          name: 'hajri-agent bench',
          scopes: ['attendance:write'],
          rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
        },
        { name: 'bench', ip: null },
      )
      return { ...database, clientId: app.clientId, clientSecret: app.clientSecret }
    } finally {
      await handle.close()
    }
  } catch (err) {
    await database.remove()
    throw err
  }
}
