import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { openDatabase } from '../../cloud/db/database.js'
import { migrateToLatest } from '../../cloud/db/migrate.js'
import { newId } from '../../shared/ids.js'

export interface RawInsertResult {
  rows: number
  seconds: number
  rowsPerSecond: number
}

const COLUMNS = [
  'id',
  'tenant_id',
  'employee_id',
  'employee_code',
  'punch_type',
  'punched_at',
  'received_at',
  'device_id',
  'source',
  'external_id',
  'fingerprint',
] as const

/**
 * The floor under batch ingestion: `rows` punches inserted with better-sqlite3 prepared statements,
 * `perTransaction` rows per transaction, nothing else. The schema is made by the product's own
 * migration (same columns, indexes and foreign keys) and the connection has the product's pragmas
 * (WAL, synchronous=FULL, foreign_keys=ON; cloud/db/database.ts). Rows are built before the clock
 * starts: only the insert is timed.
 */
export async function rawPunchInsert(rows: number, perTransaction: number): Promise<RawInsertResult> {
  const dir = await mkdtemp(join(tmpdir(), 'hajri-bench-raw-'))
  const path = join(dir, 'raw.db')
  try {
    const handle = openDatabase(`sqlite:${path}`)
    await migrateToLatest(handle.db)
    await handle.close()

    const db = new SqliteDatabase(path)
    try {
      db.pragma('journal_mode = WAL')
      db.pragma('synchronous = FULL')
      db.pragma('foreign_keys = ON')
      const tenantId = newId('tenant')
      db.prepare(
        'insert into tenants (id, name, time_zone, backfill_days, last_change_us, created_at) values (?, ?, ?, ?, 0, ?)',
      ).run(tenantId, 'Raw', 'Asia/Kolkata', 90, Date.now() * 1000)
      const insertEmployee = db.prepare(
        'insert into employees (id, tenant_id, employee_code, name, status, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?)',
      )
      const employees = Array.from({ length: 500 }, (_, i) => ({
        id: newId('employee'),
        code: `E${String(i + 1).padStart(6, '0')}`,
      }))
      db.transaction(() => {
        for (const e of employees) insertEmployee.run(e.id, tenantId, e.code, e.code, 'ACTIVE', 1, 1)
      })()

      const now = Date.now() * 1000
      const values = Array.from({ length: rows }, (_, i) => {
        const e = employees[i % employees.length] as { id: string; code: string }
        return [
          newId('punch'),
          tenantId,
          e.id,
          e.code,
          i % 2 === 0 ? 'IN' : 'OUT',
          now - 3_600_000_000 + i * 1000,
          now,
          'gate-1',
          'hajri-bench',
          `raw-${i}`,
          randomBytes(16).toString('base64url').slice(0, 22),
        ]
      })
      const insert = db.prepare(
        `insert into punches (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`,
      )
      const insertChunk = db.transaction((chunk: unknown[][]) => {
        for (const v of chunk) insert.run(...v)
      })
      const started = process.hrtime.bigint()
      for (let i = 0; i < values.length; i += perTransaction) insertChunk(values.slice(i, i + perTransaction))
      const seconds = Number(process.hrtime.bigint() - started) / 1e9
      return { rows, seconds, rowsPerSecond: rows / seconds }
    } finally {
      db.close()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
