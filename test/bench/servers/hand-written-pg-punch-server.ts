import Fastify from 'fastify'
import pg from 'pg'
import { nowMicros } from '../../../shared/time.js'
import { bearerKeyHash, punchRows, readPunch } from './hand-written-punch.js'
import { serveInChild } from './serve-in-child.js'

/**
 * The PostgreSQL baseline of the punch benchmarks: the durable work of POST /attendance/punches and
 * /punches/batch done by hand, one round trip a request, with `pg` (the driver the cloud uses).
 *
 * - One punch: ONE named (prepared once per connection) statement in autocommit, synchronous_commit
 *   on, so the 201 follows a durable commit. It does all of it: the API key by its hash with its
 *   tenant (live, unexpired), the tenant's employee (active), the punch `ON CONFLICT (tenant_id,
 *   external_id) DO NOTHING RETURNING`, its attendance.punch.created event and its day for the
 *   attendance engine only when the punch was inserted.
 * - A batch: ONE unnamed statement (its best plan depends on the arrays' length) taking one array
 *   per column, `INSERT ... SELECT FROM unnest(...)` joined to the tenant's active employees, with
 *   the events and the days of the rows inserted.
 *
 * Same tables, indexes and foreign keys as the cloud (the parent migrated the schema). Left out:
 * everything but the database work (scopes, rate limits, schema validation, problems, logging,
 * Kysely). argv[2]: the database URL; argv[3]: the tenant's time zone.
 */
await serveInChild(async () => {
  const url = process.argv[2]
  const timeZone = process.argv[3] ?? 'Asia/Kolkata'
  if (!url) throw new Error('usage: hand-written-pg-punch-server.ts <postgres url> [time zone]')
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const app = Fastify({ logger: false, bodyLimit: 4 * 1024 * 1024 })
  app.addHook('onClose', () => pool.end())
  const credential = `
    cred as (
      select k.tenant_id from api_keys k join tenants t on t.id = k.tenant_id
      where k.key_hash = $1 and k.revoked_at is null and k.expires_at > $2::bigint
    )`
  const single = `
    with ${credential}, employee as (
      select e.id, e.tenant_id from employees e join cred on e.tenant_id = cred.tenant_id
      where e.employee_code = $3 and e.status = 'ACTIVE'
    ), punch as (
      insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at,
        received_at, device_id, source, external_id, fingerprint)
      select $4, employee.tenant_id, employee.id, $3, $5, $6::bigint, $2::bigint, $7::text, $8::text,
        $9::text, $10
      from employee
      on conflict (tenant_id, external_id) do nothing
      returning id, tenant_id
    ), event as (
      insert into webhook_events (id, tenant_id, type, body, body_bytes, body_sha256, endpoint_id,
        created_at, fanned_out)
      select $11, punch.tenant_id, 'attendance.punch.created', $12, $13::integer, $14, null, $2::bigint, 0
      from punch
    ), day as (
      insert into attendance_dirty (tenant_id, employee_code, local_date, queued_at)
      select punch.tenant_id, $3, $15, $2::bigint from punch
      on conflict (tenant_id, employee_code, local_date) do update set queued_at = excluded.queued_at
    )
    select (select count(*) from cred)::integer as authenticated,
      (select count(*) from punch)::integer as inserted`
  const batch = `
    with ${credential}, input as (
      select * from unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::text[],
        $9::text[], $10::text[], $11::text[], $12::text[], $13::integer[], $14::text[], $15::text[])
        as r(id, employee_code, punch_type, punched_at, device_id, source, external_id, fingerprint,
          event_id, event_body, event_bytes, event_sha256, local_date)
    ), punch as (
      insert into punches (id, tenant_id, employee_id, employee_code, punch_type, punched_at,
        received_at, device_id, source, external_id, fingerprint)
      select r.id, e.tenant_id, e.id, r.employee_code, r.punch_type, r.punched_at, $2::bigint,
        r.device_id, r.source, r.external_id, r.fingerprint
      from input r join employees e on e.employee_code = r.employee_code and e.status = 'ACTIVE'
        and e.tenant_id = (select tenant_id from cred)
      on conflict (tenant_id, external_id) do nothing
      returning id, tenant_id, employee_code
    ), event as (
      insert into webhook_events (id, tenant_id, type, body, body_bytes, body_sha256, endpoint_id,
        created_at, fanned_out)
      select r.event_id, p.tenant_id, 'attendance.punch.created', r.event_body, r.event_bytes,
        r.event_sha256, null, $2::bigint, 0
      from punch p join input r on r.id = p.id
    ), day as (
      insert into attendance_dirty (tenant_id, employee_code, local_date, queued_at)
      select distinct p.tenant_id, p.employee_code, r.local_date, $2::bigint
      from punch p join input r on r.id = p.id
      on conflict (tenant_id, employee_code, local_date) do update set queued_at = excluded.queued_at
    )
    select (select count(*) from cred)::integer as authenticated, array(select id from punch) as inserted`

  app.post('/api/public/v1/attendance/punches', async (request, reply) => {
    const keyHash = bearerKeyHash(request.headers.authorization)
    const input = readPunch(request.body)
    if (!keyHash) return reply.code(401).send({ code: 'unauthorized' })
    if (!input) return reply.code(400).send({ code: 'validation_failed' })
    const now = nowMicros()
    const r = punchRows(input, now, timeZone)
    const p = r.punch
    const result = await pool.query<{ authenticated: number; inserted: number }>({
      name: 'hand-written-punch',
      text: single,
      values: [
        keyHash,
        now,
        p.employeeCode,
        p.id,
        p.punchType,
        r.punchedAt,
        p.deviceId,
        p.source,
        p.externalId,
        r.fingerprint,
        r.eventId,
        r.eventBody,
        r.eventBytes,
        r.eventSha256,
        r.localDate,
      ],
    })
    const row = result.rows[0]
    if (!row?.authenticated) return reply.code(401).send({ code: 'unauthorized' })
    // A retry or an unknown employee: the cloud then takes its full path; the load never sends one.
    if (!row.inserted) return reply.code(409).send({ code: 'not_stored' })
    return reply.code(201).send(p)
  })

  app.post('/api/public/v1/attendance/punches/batch', async (request, reply) => {
    const keyHash = bearerKeyHash(request.headers.authorization)
    const items = (request.body as { punches?: unknown[] } | null)?.punches
    if (!keyHash) return reply.code(401).send({ code: 'unauthorized' })
    if (!Array.isArray(items)) return reply.code(400).send({ code: 'validation_failed' })
    const now = nowMicros()
    const rows = items.flatMap((item) => {
      const input = readPunch(item)
      return input ? [punchRows(input, now, timeZone)] : []
    })
    const column = <T>(f: (r: (typeof rows)[number]) => T) => rows.map(f)
    const result = await pool.query<{ authenticated: number; inserted: string[] }>(batch, [
      keyHash,
      now,
      column((r) => r.punch.id),
      column((r) => r.punch.employeeCode),
      column((r) => r.punch.punchType),
      column((r) => r.punchedAt),
      column((r) => r.punch.deviceId),
      column((r) => r.punch.source),
      column((r) => r.punch.externalId),
      column((r) => r.fingerprint),
      column((r) => r.eventId),
      column((r) => r.eventBody),
      column((r) => r.eventBytes),
      column((r) => r.eventSha256),
      column((r) => r.localDate),
    ])
    const row = result.rows[0]
    if (!row?.authenticated) return reply.code(401).send({ code: 'unauthorized' })
    const inserted = new Set(row.inserted)
    const summary = { received: items.length, created: inserted.size, duplicate: 0, rejected: 0 }
    // Not inserted: a retry or an unknown employee, which the load never sends; counted, not told apart.
    summary.rejected = items.length - inserted.size
    const results = rows.map((r, index) =>
      inserted.has(r.punch.id)
        ? { index, status: 'created', punch: r.punch }
        : { index, status: 'rejected' as const },
    )
    return reply.code(200).send({ summary, results })
  })
  return app
})
