import SqliteDatabase from 'better-sqlite3'
import Fastify from 'fastify'
import { openWalFile, WalSync } from '../../../cloud/db/wal-sync.js'
import type { Punch } from '../../../shared/punch.js'
import { nowMicros } from '../../../shared/time.js'
import { bearerKeyHash, type PunchRows, punchRows, readPunch } from './hand-written-punch.js'
import { serveInChild } from './serve-in-child.js'

/**
 * The SQLite baseline of the punch benchmarks: the durable work of POST /attendance/punches and
 * /punches/batch written by hand with better-sqlite3 prepared statements, and the cloud's
 * durability scheme (docs/decisions/0041-sqlite-durability.md): WAL with synchronous=NORMAL, the
 * requests of one turn of the event loop in one shared transaction (as cloud/db/group-commit.ts),
 * then the WAL fdatasynced off the event loop, one fsync shared by every commit before it (the
 * cloud's own WalSync, cloud/db/wal-sync.ts); no answer before its fsync. In each request's part of
 * the transaction: the API key by its hash with its tenant (live, unexpired), the employee
 * (active), the punch `ON CONFLICT (tenant_id, external_id) DO NOTHING` (a stored one is read back
 * and replayed), its attendance.punch.created event and its day for the attendance engine, into
 * the product's tables (migrated by the parent) with their indexes and foreign keys. Left out:
 * everything but the database work (scopes, rate limits, schema validation, problems, logging,
 * Kysely). argv[2]: `sqlite:<file>`; argv[3]: the tenant's time zone.
 */

type Answer = { status: number; body: unknown }

await serveInChild(async () => {
  const url = process.argv[2]
  const timeZone = process.argv[3] ?? 'Asia/Kolkata'
  if (!url?.startsWith('sqlite:'))
    throw new Error('usage: hand-written-sqlite-punch-server.ts sqlite:<file> [zone]')
  const path = url.slice('sqlite:'.length)
  const db = new SqliteDatabase(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  const connection = { commits: 0 }
  const wal = new WalSync(connection, () => openWalFile(path))

  const findKey = db.prepare<[string], { tenant_id: string; revoked_at: number | null; expires_at: number }>(
    `select k.tenant_id, k.revoked_at, k.expires_at, t.time_zone, t.backfill_days
     from api_keys k join tenants t on t.id = k.tenant_id where k.key_hash = ?`,
  )
  const findEmployee = db.prepare<[string, string], { id: string; status: string }>(
    'select id, status from employees where tenant_id = ? and employee_code = ?',
  )
  const insertPunch = db.prepare(
    `insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at, received_at,
       device_id, source, external_id, fingerprint) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (tenant_id, external_id) do nothing returning id`,
  )
  const storedPunch = db.prepare<[string, string], Record<string, unknown>>(
    'select * from punches where tenant_id = ? and external_id = ?',
  )
  const insertEvent = db.prepare(
    `insert into webhook_events (id, tenant_id, type, body, body_bytes, body_sha256, endpoint_id, created_at,
       fanned_out) values (?, ?, 'attendance.punch.created', ?, ?, ?, null, ?, 0)`,
  )
  const queueDay = db.prepare(
    `insert into attendance_dirty (tenant_id, employee_code, local_date, queued_at) values (?, ?, ?, ?)
     on conflict (tenant_id, employee_code, local_date) do update set queued_at = excluded.queued_at`,
  )

  /** The tenant of a live key, or undefined. Inside the transaction, as the brief of the baseline. */
  const tenantOf = (keyHash: string, now: number) => {
    const key = findKey.get(keyHash)
    return key && key.revoked_at === null && key.expires_at > now ? key.tenant_id : undefined
  }

  /** One punch's rows; true if inserted, else the stored punch's row (a retry). */
  const store = (tenantId: string, employeeId: string, r: PunchRows, days: Set<string>) => {
    const p = r.punch
    const inserted = insertPunch.get(
      p.id,
      tenantId,
      employeeId,
      p.employeeCode,
      p.punchType,
      r.punchedAt,
      r.receivedAt,
      p.deviceId,
      p.source,
      p.externalId,
      r.fingerprint,
    )
    if (!inserted) return false
    insertEvent.run(r.eventId, tenantId, r.eventBody, r.eventBytes, r.eventSha256, r.receivedAt)
    const day = `${p.employeeCode}|${r.localDate}`
    if (!days.has(day)) {
      days.add(day)
      queueDay.run(tenantId, p.employeeCode, r.localDate, r.receivedAt)
    }
    return true
  }

  // Group commit: the units of one turn of the event loop share a transaction, then an fsync.
  let queue: { work: () => Answer; resolve: (a: Answer) => void; reject: (e: unknown) => void }[] = []
  const flush = () => {
    const units = queue
    queue = []
    let answers: Answer[]
    try {
      answers = db.transaction(() => units.map((u) => u.work()))()
      connection.commits++
    } catch (err) {
      for (const u of units) u.reject(err)
      return
    }
    // Durable before anyone is told.
    wal.durable().then(
      () => {
        units.forEach((u, i) => {
          u.resolve(answers[i] as Answer)
        })
      },
      (err) => {
        for (const u of units) u.reject(err)
      },
    )
  }
  const transact = (work: () => Answer) =>
    new Promise<Answer>((resolve, reject) => {
      if (queue.length === 0) setImmediate(flush)
      queue.push({ work, resolve, reject })
    })

  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 })
  app.addHook('onClose', async () => {
    await wal.close()
    db.close()
  })

  app.post('/api/public/v1/attendance/punches', async (request, reply) => {
    const keyHash = bearerKeyHash(request.headers.authorization)
    const input = readPunch(request.body)
    if (!keyHash) return reply.code(401).send({ code: 'unauthorized' })
    if (!input) return reply.code(400).send({ code: 'validation_failed' })
    const now = nowMicros()
    const rows = punchRows(input, now, timeZone)
    const answer = await transact(() => {
      const tenantId = tenantOf(keyHash, now)
      if (!tenantId) return { status: 401, body: { code: 'unauthorized' } }
      const employee = findEmployee.get(tenantId, input.employeeCode)
      if (employee?.status !== 'ACTIVE') return { status: 422, body: { code: 'punch_employee_not_found' } }
      if (store(tenantId, employee.id, rows, new Set())) return { status: 201, body: rows.punch }
      const stored = input.externalId == null ? undefined : storedPunch.get(tenantId, input.externalId)
      if (!stored) throw new Error('punch neither inserted nor found')
      return { status: 200, body: stored }
    })
    return reply.code(answer.status).send(answer.body)
  })

  app.post('/api/public/v1/attendance/punches/batch', async (request, reply) => {
    const keyHash = bearerKeyHash(request.headers.authorization)
    const items = (request.body as { punches?: unknown[] } | null)?.punches
    if (!keyHash) return reply.code(401).send({ code: 'unauthorized' })
    if (!Array.isArray(items)) return reply.code(400).send({ code: 'validation_failed' })
    const now = nowMicros()
    const inputs = items.map(readPunch)
    const rows = inputs.map((input) => input && punchRows(input, now, timeZone))
    const answer = await transact(() => {
      const tenantId = tenantOf(keyHash, now)
      if (!tenantId) return { status: 401, body: { code: 'unauthorized' } }
      const summary = { received: items.length, created: 0, duplicate: 0, rejected: 0 }
      const results: { index: number; status: string; punch?: Punch | Record<string, unknown> }[] = []
      const employees = new Map<string, { id: string; status: string } | undefined>()
      const days = new Set<string>()
      rows.forEach((r, index) => {
        const code = r?.punch.employeeCode
        if (!r || code === undefined) {
          summary.rejected++
          results.push({ index, status: 'rejected' })
          return
        }
        if (!employees.has(code)) employees.set(code, findEmployee.get(tenantId, code))
        const employee = employees.get(code)
        if (employee?.status !== 'ACTIVE') {
          summary.rejected++
          results.push({ index, status: 'rejected' })
        } else if (store(tenantId, employee.id, r, days)) {
          summary.created++
          results.push({ index, status: 'created', punch: r.punch })
        } else {
          summary.duplicate++
          const stored = r.punch.externalId ? storedPunch.get(tenantId, r.punch.externalId) : undefined
          results.push({ index, status: 'duplicate', ...(stored ? { punch: stored } : {}) })
        }
      })
      return { status: 200, body: { summary, results } }
    })
    return reply.code(answer.status).send(answer.body)
  })
  return app
})
