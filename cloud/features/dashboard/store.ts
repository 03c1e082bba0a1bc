import { type RawBuilder, sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import type { OffsetSegment } from './zone-calendar.js'

/** Buckets of equal width from an origin, over wall-clock time (a time plus its zone's offset then). */
export interface Buckets {
  /** µs; `from` inclusive, `to` exclusive, on the stored column. */
  from: number
  to: number
  /** Where bucket 0 starts, on the wall clock (µs). */
  origin: number
  width: number
  offsets: OffsetSegment[]
}

/**
 * `(column + offset - origin) / width`, in SQL that SQLite and PostgreSQL both run and agree on:
 * integer columns, integer literals (so the division is an integer one on both), a CASE for the
 * offsets. The numbers are ours, never a client's, and go in as literals: PostgreSQL then sees the
 * grouped expression and the selected one as the same.
 */
function bucketOf(column: 'punched_at' | 'created_at', b: Buckets): RawBuilder<number> {
  const lit = (n: number) => {
    if (!Number.isSafeInteger(n)) throw new Error(`not a safe integer: ${n}`)
    return sql.lit(n)
  }
  const ref = sql.ref(column)
  const offsets = b.offsets
  let offset: RawBuilder<unknown>
  if (offsets.length === 1) offset = lit(offsets[0]?.offsetMicros ?? 0)
  else {
    const branches = offsets.map((o) =>
      o.untilMicros === undefined
        ? sql`else ${lit(o.offsetMicros)}`
        : sql`when ${ref} < ${lit(o.untilMicros)} then ${lit(o.offsetMicros)}`,
    )
    offset = sql`case ${sql.join(branches, sql` `)} end`
  }
  return sql<number>`((${ref} + (${offset})) - (${lit(b.origin)})) / ${lit(b.width)}`
}

export interface BucketCount {
  bucket: number
  count: number
}

/** What the dashboard counts: aggregates over a tenant's punches and webhook deliveries. */
export class DashboardStore {
  constructor(private readonly db: Executor) {}

  /** Punches by when they happened; a range of the (tenant_id, punched_at) index. */
  async punchCounts(tenantId: string, buckets: Buckets): Promise<BucketCount[]> {
    const bucket = bucketOf('punched_at', buckets)
    return this.db
      .selectFrom('punches')
      .select((eb) => [bucket.as('bucket'), eb.fn.countAll<number>().as('count')])
      .where('tenant_id', '=', tenantId)
      .where('punched_at', '>=', buckets.from)
      .where('punched_at', '<', buckets.to)
      .groupBy(bucket)
      .execute()
  }

  /** Deliveries by when they were created, and their status now; a range of migration 0006's index. */
  async deliveryCounts(tenantId: string, buckets: Buckets): Promise<(BucketCount & { status: string })[]> {
    const bucket = bucketOf('created_at', buckets)
    return this.db
      .selectFrom('webhook_deliveries')
      .select((eb) => [bucket.as('bucket'), 'status', eb.fn.countAll<number>().as('count')])
      .where('tenant_id', '=', tenantId)
      .where('created_at', '>=', buckets.from)
      .where('created_at', '<', buckets.to)
      .groupBy([bucket, 'status'])
      .execute()
  }
}
