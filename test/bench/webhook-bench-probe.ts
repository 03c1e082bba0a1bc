import SqliteDatabase from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from '../../cloud/db/schema.js'
import type { WebhookBenchDatabase } from './webhook-bench-database.js'

/** One delivery's way from the punch's event to its attempt (µs, the server's clock). */
export interface DeliveryTimes {
  externalId: string
  eventAt: number
  /** When the dispatcher fanned the event out (the round's start). */
  deliveryAt: number
  /** When the first attempt began (after its claim and the secret's lookup). */
  attemptAt: number
  attempts: number
}

// int8 (count(*), µs times) as a number, as the cloud reads it: the values stay below 2^53.
const INT8_OID = 20
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

/**
 * Reads the database of a running server to see what the dispatcher has done: the benchmarks'
 * checks and stage times. A connection of its own that only reads: a read-only SQLite connection
 * (WAL lets it read beside the server's writer), or one PostgreSQL connection.
 */
export class WebhookBenchProbe {
  private readonly db: Kysely<Database>

  constructor(database: Pick<WebhookBenchDatabase, 'url' | 'dialect'>) {
    this.db = new Kysely<Database>({
      dialect:
        database.dialect === 'sqlite'
          ? new SqliteDialect({
              database: new SqliteDatabase(database.url.slice('sqlite:'.length), {
                readonly: true,
                fileMustExist: true,
              }),
            })
          : new PostgresDialect({
              pool: new pg.Pool({ connectionString: database.url, max: 1, types: pgTypes }),
            }),
    })
  }

  /** Deliveries of a tenant by status. */
  async statusCounts(tenantId: string): Promise<Record<string, number>> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select(['status', sql<number>`count(*)`.as('n')])
      .where('tenant_id', '=', tenantId)
      .groupBy('status')
      .execute()
    return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]))
  }

  /** Attempts whose answer was not 2xx (or that had none): how many, and the first one's answer or error. */
  async failedAttempts(tenantId: string): Promise<{ count: number; first: string | undefined }> {
    const failed = this.db
      .selectFrom('webhook_attempts')
      .where('tenant_id', '=', tenantId)
      .where((eb) =>
        eb.or([
          eb('response_status', 'is', null),
          eb('response_status', '<', 200),
          eb('response_status', '>', 299),
        ]),
      )
    const count = await failed.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()
    const first = await failed
      .select(['started_at', 'number', 'response_status', 'error', 'duration_ms'])
      .orderBy('started_at')
      .limit(1)
      .executeTakeFirst()
    return {
      count: Number(count.n),
      first:
        first &&
        `attempt ${first.number} at ${new Date(Number(first.started_at) / 1000).toISOString()}: ` +
          `${first.response_status ?? first.error} after ${first.duration_ms} ms`,
    }
  }

  /** A tenant's punch events after `afterId`, oldest first: the bodies the baseline sends. */
  async punchEvents(tenantId: string, afterId = ''): Promise<{ id: string; body: string }[]> {
    return this.db
      .selectFrom('webhook_events')
      .select(['id', 'body'])
      .where('tenant_id', '=', tenantId)
      .where('type', '=', 'attendance.punch.created')
      .where('id', '>', afterId)
      .orderBy('id')
      .execute()
  }

  /** Each punch delivery of a tenant with its stage times. */
  async deliveryTimes(tenantId: string): Promise<DeliveryTimes[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
      .select((eb) => [
        'v.body',
        'v.created_at as eventAt',
        'd.created_at as deliveryAt',
        'd.attempts',
        eb
          .selectFrom('webhook_attempts as a')
          .select((a) => a.fn.min('a.started_at').as('first'))
          .whereRef('a.delivery_id', '=', 'd.id')
          .as('attemptAt'),
      ])
      .where('d.tenant_id', '=', tenantId)
      .where('d.event_type', '=', 'attendance.punch.created')
      .execute()
    return rows.map((r) => ({
      externalId: String((JSON.parse(r.body) as { data: { externalId?: unknown } }).data.externalId),
      eventAt: Number(r.eventAt),
      deliveryAt: Number(r.deliveryAt),
      attemptAt: r.attemptAt === null ? Number.NaN : Number(r.attemptAt),
      attempts: Number(r.attempts),
    }))
  }

  close(): Promise<void> {
    return this.db.destroy()
  }
}
