import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import { MAX_RATE_LIMIT_PER_MINUTE } from '../../cloud/features/bearer-auth/credential-settings.js'
import { createServices } from '../../cloud/services.js'
import type { EmployeeInput } from '../../shared/employee.js'

export interface BenchDatabase {
  /** `sqlite:<file>`, for the server process. */
  url: string
  /** The file itself, for raw reads after the server has stopped. */
  path: string
  tenantId: string
  /** An API key of the tenant with every scope the benchmarks use. */
  apiKey: string
  /** Codes of the tenant's employees, all ACTIVE. */
  employeeCodes: string[]
  /** µs, just before the first employee was written. */
  seededFrom: number
  remove(): Promise<void>
}

export function benchEmployee(code: string): EmployeeInput {
  return {
    employeeCode: code,
    name: `Employee ${code}`,
    email: `${code.toLowerCase()}@example.test`,
    department: 'Assembly',
    location: 'Pune',
    status: 'ACTIVE',
  }
}

// Chunks of this many per upsert transaction, as an HR import would send them.
const UPSERT_CHUNK = 5_000

/**
 * A temporary SQLite file, migrated, with one tenant, its API key and `employees` ACTIVE employees,
 * written through the product's own services so the rows are what the API would have made.
 */
export async function createBenchDatabase(employees: number): Promise<BenchDatabase> {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-'))
  const path = join(dir, 'hajri.db')
  const url = `sqlite:${path}`
  const handle = openDatabase(url)
  const remove = () => rm(dir, { recursive: true, force: true })
  try {
    await migrateToLatest(handle.db)
    const services = createServices(handle)
    const { tenantId } = await services.tenants.create({
      name: 'Bench tenant',
      adminEmail: `owner-${dir.slice(-6).toLowerCase()}@example.test`,
    })
    // The highest rate limit there is: the benchmark measures throughput, not the limiter.
    const { key } = await services.apiKeys.create(
      tenantId,
      {
        scopes: ['employees:read', 'attendance:read', 'attendance:write'],
        rateLimitPerMinute: MAX_RATE_LIMIT_PER_MINUTE,
      },
      { name: 'bench', ip: null },
    )
    const employeeCodes = Array.from({ length: employees }, (_, i) => `E${String(i + 1).padStart(6, '0')}`)
    const service = services.employees
    const seededFrom = Date.now() * 1000
    for (let i = 0; i < employeeCodes.length; i += UPSERT_CHUNK) {
      await service.upsert(tenantId, employeeCodes.slice(i, i + UPSERT_CHUNK).map(benchEmployee))
    }
    const seeded: BenchDatabase = {
      url,
      path,
      tenantId,
      apiKey: key,
      employeeCodes,
      seededFrom,
      remove,
    }
    await handle.close()
    return seeded
  } catch (err) {
    await handle.close()
    await remove()
    throw err
  }
}
