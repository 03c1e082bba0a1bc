import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { newId } from '../../shared/ids.js'
import type { RawInsertResult } from './raw-punch-insert.js'

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
 * The floor under batch ingestion on PostgreSQL: `rows` punches of the tenant's employees inserted
 * with plain multi-row `INSERT ... VALUES` statements of `perStatement` rows (11 parameters a row),
 * each in autocommit, one connection, nothing else (no event, no day, no conflict handling). Into a
 * schema the product migrated (same indexes and foreign keys). Rows are built before the clock
 * starts: only the inserts are timed.
 */
export async function rawPgPunchInsert(
  url: string,
  tenantId: string,
  rows: number,
  perStatement: number,
): Promise<RawInsertResult> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const employees = (
      await client.query<{ id: string; employee_code: string }>(
        'select id, employee_code from employees where tenant_id = $1',
        [tenantId],
      )
    ).rows
    if (employees.length === 0) throw new Error('no employees to insert punches for')
    const tag = randomBytes(4).toString('hex')
    const now = Date.now() * 1000
    const values = Array.from({ length: rows }, (_, i) => {
      const e = employees[i % employees.length] as { id: string; employee_code: string }
      return [
        newId('punch'),
        tenantId,
        e.id,
        e.employee_code,
        i % 2 === 0 ? 'IN' : 'OUT',
        now - 3_600_000_000 + i * 1000,
        now,
        'gate-1',
        'hajri-bench',
        `raw-${tag}-${i}`,
        randomBytes(16).toString('base64url').slice(0, 22),
      ]
    })
    const statement = (n: number) =>
      `insert into punches (${COLUMNS.join(', ')}) values ${Array.from(
        { length: n },
        (_, r) => `(${COLUMNS.map((_, c) => `$${r * COLUMNS.length + c + 1}`).join(', ')})`,
      ).join(', ')}`
    const texts = new Map<number, string>()
    const started = process.hrtime.bigint()
    for (let i = 0; i < values.length; i += perStatement) {
      const chunk = values.slice(i, i + perStatement)
      let text = texts.get(chunk.length)
      if (!text) {
        text = statement(chunk.length)
        texts.set(chunk.length, text)
      }
      await client.query(text, chunk.flat())
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    return { rows, seconds, rowsPerSecond: rows / seconds }
  } finally {
    await client.end()
  }
}
