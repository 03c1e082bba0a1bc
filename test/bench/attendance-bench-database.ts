import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import type { Actor } from '../../cloud/auth/actor.js'
import type { TenantContext } from '../../cloud/auth/tenant-context.js'
import { type DatabaseHandle, openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import type { PunchesTable } from '../../cloud/db/schema.js'
import type { EnginePunch } from '../../cloud/features/attendance/engine/types.js'
import { type EmployeeInputs, employeeInputs } from '../../cloud/features/attendance/tenant-config.js'
import { punchFingerprint } from '../../cloud/features/punches/punch-fingerprint.js'
import { createServices, type Services } from '../../cloud/services.js'
import { newId } from '../../shared/ids.js'
import { nowMicros } from '../../shared/time.js'
import type { AttendanceBenchDialect } from './attendance-bench-settings.js'
import { type BenchEmployeeSpec, DAY_GROUP, type GeneratedPunch, NIGHT_GROUP } from './attendance-punches.js'
import { benchEmployee } from './bench-database.js'

export const BENCH_ACTOR: Actor = { name: 'bench', ip: null }

/** A tenant with the attendance configuration the benchmarks compute days by, open in this process. */
export interface AttendanceBenchTenant {
  dialect: AttendanceBenchDialect
  handle: DatabaseHandle
  /** Built as `serve` builds them, with incremental attendance on or off. */
  services: Services
  tenant: TenantContext
  employees: BenchEmployeeSpec[]
  /** Employee id by code, for raw punch rows. */
  employeeIds: Map<string, string>
  /** Closes the database and deletes it (the file, or the schema). */
  remove(): Promise<void>
}

/**
 * Where the data goes: a temporary SQLite file, or a schema of its own in the PostgreSQL the tests
 * use (as test/support/cloud-harness.ts and webhook-bench-database.ts make them), dropped afterwards.
 */
async function throwawayDatabase(
  dialect: AttendanceBenchDialect,
  postgresUrl: string,
): Promise<{ url: string; remove(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-attendance-'))
    return { url: `sqlite:${join(dir, 'hajri.db')}`, remove: () => rm(dir, { recursive: true, force: true }) }
  }
  const schema = `hajri_bench_${randomBytes(6).toString('hex')}`
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 5000 })
    try {
      await client.connect()
      await client.query(statement)
    } catch (err) {
      throw new Error(
        `PostgreSQL at ${postgresUrl} (HAJRI_TEST_POSTGRES_URL): ${statement} failed: ${(err as Error).message}`,
        { cause: err },
      )
    } finally {
      await client.end()
    }
  }
  await admin(`create schema ${schema}`)
  const url = new URL(postgresUrl)
  url.searchParams.set('options', `-c search_path=${schema}`)
  return { url: url.toString(), remove: () => admin(`drop schema ${schema} cascade`) }
}

/**
 * The attendance configuration, through the product's own (audited) service: a day shift
 * (09:00–18:00, an hour's unpaid break) for the Day group and a night shift (22:00–06:00, half an
 * hour) for the Night group, from `from`; the tenant's policy (Sunday off, Factories Act limits) and
 * the Night group's own (overtime beyond the shift); one tenant-wide holiday.
 */
async function configure(services: Services, tenantId: string, from: string, holiday: string): Promise<void> {
  const config = services.attendanceConfig
  await config.createShift(
    tenantId,
    {
      code: 'DAY',
      name: 'General',
      start: '09:00',
      end: '18:00',
      unpaidBreakMinutes: 60,
      lateGraceMinutes: 10,
      earlyExitGraceMinutes: 10,
    },
    BENCH_ACTOR,
  )
  await config.createShift(
    tenantId,
    {
      code: 'NIGHT',
      name: 'Night',
      start: '22:00',
      end: '06:00',
      unpaidBreakMinutes: 30,
      lateGraceMinutes: 10,
      earlyExitGraceMinutes: 10,
    },
    BENCH_ACTOR,
  )
  await config.createPolicy(
    tenantId,
    { legalRegime: 'FACTORIES_ACT_1948', weeklyOffDays: [0], pairing: 'TOLERANT', fullDayMinutes: 480 },
    BENCH_ACTOR,
  )
  await config.createPolicy(
    tenantId,
    { group: NIGHT_GROUP, overtimeBasis: 'SHIFT', overtimeToleranceMinutes: 15 },
    BENCH_ACTOR,
  )
  for (const [group, shiftCode] of [
    [DAY_GROUP, 'DAY'],
    [NIGHT_GROUP, 'NIGHT'],
  ] as const) {
    await config.createAssignment(tenantId, { group, shiftCode, effectiveFrom: from }, BENCH_ACTOR)
  }
  await config.createHoliday(tenantId, { date: holiday, name: 'Bench holiday' }, BENCH_ACTOR)
}

/**
 * A throwaway database, migrated, with one tenant (Asia/Kolkata, the product's default zone), its
 * attendance configuration (configured from `configFrom`, with `holiday`) and `employees` ACTIVE
 * employees in two departments, all written through the product's services. The services stay open
 * for the benchmark: the caller removes the tenant when done.
 */
export async function createAttendanceBenchTenant(options: {
  dialect: AttendanceBenchDialect
  postgresUrl: string
  employees: BenchEmployeeSpec[]
  incrementalAttendance: boolean
  configFrom: string
  holiday: string
}): Promise<AttendanceBenchTenant> {
  const { url, remove: drop } = await throwawayDatabase(options.dialect, options.postgresUrl)
  const handle = openDatabase(url)
  const remove = async () => {
    await handle.close()
    await drop()
  }
  try {
    await migrateToLatest(handle.db)
    const services = createServices(handle, { incrementalAttendance: options.incrementalAttendance })
    const { tenantId } = await services.tenants.create({
      name: 'Bench attendance',
      adminEmail: `owner-${randomBytes(4).toString('hex')}@example.test`,
    })
    const row = await services.stores.read.tenants.get(tenantId)
    if (!row) throw new Error('the tenant just made is not there')
    const tenant: TenantContext = { id: tenantId, timeZone: row.time_zone, backfillDays: row.backfill_days }
    await configure(services, tenantId, options.configFrom, options.holiday)
    for (let i = 0; i < options.employees.length; i += 5_000) {
      await services.employees.upsert(
        tenantId,
        options.employees.slice(i, i + 5_000).map((e) => ({ ...benchEmployee(e.code), department: e.group })),
      )
    }
    const ids = await handle.db
      .selectFrom('employees')
      .select(['id', 'employee_code'])
      .where('tenant_id', '=', tenantId)
      .execute()
    return {
      dialect: options.dialect,
      handle,
      services,
      tenant,
      employees: options.employees,
      employeeIds: new Map(ids.map((r) => [r.employee_code, r.id])),
      remove,
    }
  } catch (err) {
    await remove().catch(() => {})
    throw err
  }
}

/** Rows per INSERT: 11 columns, well under both databases' parameter limits. */
const INSERT_CHUNK = 1_000

/**
 * Stores punches straight into the punch log, as ingestion would have stored them (same columns,
 * fingerprints, ids), in one transaction of multi-row INSERTs: setting up a month of punches this way
 * takes seconds where the API would take minutes, and the benchmark does not time it. Returns each
 * employee's punches as the engine takes them, with their stored ids.
 */
export async function insertPunchesRaw(
  bench: AttendanceBenchTenant,
  punches: readonly GeneratedPunch[],
): Promise<Map<string, EnginePunch[]>> {
  const now = nowMicros()
  const byEmployee = new Map<string, EnginePunch[]>()
  const rows: PunchesTable[] = punches.map((p, i) => {
    const employeeId = bench.employeeIds.get(p.employeeCode)
    if (employeeId === undefined) throw new Error(`no employee ${p.employeeCode}`)
    const input = {
      employeeCode: p.employeeCode,
      punchType: p.punchType,
      deviceId: 'gate-1',
      source: 'hajri-bench',
      externalId: `seed-${i}`,
    }
    const id = newId('punch', Math.floor(p.punchedAt / 1000))
    const list = byEmployee.get(p.employeeCode) ?? []
    if (list.length === 0) byEmployee.set(p.employeeCode, list)
    list.push({ id, punchType: p.punchType, punchedAt: p.punchedAt })
    return {
      id,
      tenant_id: bench.tenant.id,
      employee_id: employeeId,
      employee_code: p.employeeCode,
      punch_type: p.punchType,
      punched_at: p.punchedAt,
      received_at: now,
      device_id: input.deviceId,
      source: input.source,
      external_id: input.externalId,
      fingerprint: punchFingerprint(input, p.punchedAt),
    }
  })
  await bench.handle.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await trx
        .insertInto('punches')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute()
    }
  })
  // PostgreSQL plans the recompute's queries from statistics: give it the ones a day of ingestion would.
  if (bench.dialect === 'postgres') await sql`analyze`.execute(bench.handle.db)
  // The order the recomputer reads them in (punched_at, id).
  for (const list of byEmployee.values())
    list.sort((a, b) => a.punchedAt - b.punchedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return byEmployee
}

/** What the engine needs of each group, resolved from the stored configuration as the recomputer resolves it. */
export type GroupInputs = EmployeeInputs

/**
 * Each group's policy, shift by date and holidays, read and resolved by the recomputer's own
 * functions (`DayRecomputer.loadConfig`, tenant-config.ts `employeeInputs`), for the engine-only
 * baseline. The benchmark tenants have no per-employee assignment, so a group's inputs are its
 * employees'.
 */
export async function groupInputs(bench: AttendanceBenchTenant, group: string): Promise<GroupInputs> {
  const config = await bench.services.recomputer.loadConfig(bench.tenant.id)
  return employeeInputs(config, '-', group)
}
