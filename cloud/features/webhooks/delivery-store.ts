import { PostgresAdapter, sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import { PREPARED_MARK } from '../../db/named-statements.js'
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEventsTable } from '../../db/schema.js'
import { stampedUpdate } from '../../db/stamped-update.js'

export type DeliveryRow = WebhookDeliveriesTable
export type AttemptRow = WebhookAttemptsTable
export type EventRow = WebhookEventsTable

/** What may change of a delivery once made. */
export type DeliveryChanges = Partial<
  Pick<
    DeliveryRow,
    'status' | 'attempts' | 'next_attempt_at' | 'next_trigger' | 'last_attempt_at' | 'claimed_until'
  >
>

export type PayloadMeta = Pick<EventRow, 'body_bytes' | 'body_sha256'>

export interface DeliveryListFilter {
  endpointId?: string
  status?: string
  eventType?: string
  from?: number
  to?: number
  /** Newest first: entries before this id. */
  beforeId?: string
  limit: number
}

/** How unfannedEvents locks the events it returns. */
export type EventLock = 'skip' | 'wait' | 'none'

/** A successful attempt to record: the delivery, the claim it was made under, the attempt's log entry. */
export interface SuccessfulAttempt {
  delivery: Pick<DeliveryRow, 'tenant_id' | 'id' | 'endpoint_id'>
  lease: number
  attempt: Omit<AttemptRow, 'tenant_id' | 'delivery_id'>
  /** When it was recorded (µs). */
  at: number
}

/** A claimed delivery with what its attempt needs. */
export interface DueDelivery {
  delivery: DeliveryRow
  url: string
  body: string
}

/**
 * Deliveries and their attempts. The dispatcher's queries (fan-out, claims) work across tenants:
 * they are the service's housekeeping, not a tenant's request; everything an admin reads or changes
 * is scoped by tenant.
 */
export class DeliveryStore {
  constructor(private readonly db: Executor) {}

  /**
   * Events not yet fanned out to endpoints, oldest first; of one tenant, or of all. `lock` (PostgreSQL
   * only; SQLite has one writer) locks the rows returned: `skip` passes over rows another transaction
   * holds (the dispatcher: instances share the work), `wait` waits for them (an endpoint change: it
   * must settle every event emitted before it). Either way the rows are locked in id order (the sort
   * is made before the rows are locked), the one order every transaction takes event locks in, so two
   * of them cannot each hold an event the other waits for.
   */
  async unfannedEvents(limit: number, lock: EventLock, tenantId?: string): Promise<EventRow[]> {
    let q = this.db.selectFrom('webhook_events').selectAll().where('fanned_out', '=', 0)
    if (tenantId !== undefined) q = q.where('tenant_id', '=', tenantId)
    q = q.orderBy('id').limit(limit)
    if (lock === 'skip') q = q.forUpdate().skipLocked()
    else if (lock === 'wait') q = q.forUpdate()
    return q.execute()
  }

  async markFannedOut(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    await this.db.updateTable('webhook_events').set({ fanned_out: 1 }).where('id', 'in', ids).execute()
  }

  async insertDeliveries(rows: readonly DeliveryRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      await this.db
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
        .execute()
    }
  }

  /**
   * Deliveries whose attempt is due, to active endpoints, not claimed by a live dispatcher, oldest
   * first. With `lock` (PostgreSQL) the rows are locked and rows locked by another instance are
   * skipped (FOR UPDATE SKIP LOCKED), so two instances never take the same delivery. Endpoints in
   * `skipEndpoints` (those with no free slot) are left out, so that their backlog cannot fill the
   * page and hide every other endpoint's deliveries behind it; so are tenants in `skipTenants` (those
   * holding their share of the slots), whose many endpoints would otherwise do the same.
   */
  async dueDeliveries(
    now: number,
    limit: number,
    lock: boolean,
    skipEndpoints: readonly string[] = [],
    skipTenants: readonly string[] = [],
  ): Promise<DeliveryRow[]> {
    let q = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .selectAll('d')
      .where('d.status', 'in', ['pending', 'failed'])
      .where('d.next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
      .where('e.status', '=', 'active')
      .where('e.deleted_at', 'is', null)
    if (skipEndpoints.length > 0) q = q.where('d.endpoint_id', 'not in', skipEndpoints)
    if (skipTenants.length > 0) q = q.where('d.tenant_id', 'not in', skipTenants)
    q = q.orderBy('d.next_attempt_at').orderBy('d.id').limit(limit)
    if (lock) q = q.forUpdate('d').skipLocked()
    return q.execute()
  }

  /** Claims each delivery until its own lease; one statement per distinct lease. */
  async claim(leases: ReadonlyMap<string, number>): Promise<void> {
    const byLease = new Map<number, string[]>()
    for (const [id, until] of leases) byLease.set(until, [...(byLease.get(until) ?? []), id])
    for (const [until, ids] of byLease) {
      await this.db
        .updateTable('webhook_deliveries')
        .set({ claimed_until: until })
        .where('id', 'in', ids)
        .execute()
    }
  }

  /** Drops every claim (SQLite at start: its one dispatcher is this process, so none is live). */
  async releaseAllClaims(): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: null })
      .where('claimed_until', 'is not', null)
      .execute()
  }

  async forAttempt(deliveryIds: readonly string[]): Promise<DueDelivery[]> {
    if (deliveryIds.length === 0) return []
    const rows = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
      .selectAll('d')
      .select(['e.url as endpoint_url', 'v.body as event_body'])
      .where('d.id', 'in', deliveryIds)
      .execute()
    return rows.map(({ endpoint_url, event_body, ...delivery }) => ({
      delivery,
      url: endpoint_url,
      body: event_body,
    }))
  }

  async insertAttempt(tenantId: string, row: Omit<AttemptRow, 'tenant_id'>): Promise<void> {
    await this.db
      .insertInto('webhook_attempts')
      .values({ ...row, tenant_id: tenantId })
      .execute()
  }

  /** Whether `recordSuccesses` applies here (PostgreSQL): asked first, so SQLite batches nothing. */
  recordsSuccessesInOneStatement(): boolean {
    return this.db.getExecutor().adapter instanceof PostgresAdapter
  }

  /**
   * PostgreSQL only: successful attempts, of any tenants and endpoints, written by one statement,
   * which commits alone and all at once, as the recorder's transaction would for each: the delivery
   * succeeded (only while `lease` is still its claim), its attempt logged, and its endpoint no
   * longer failing. Each row is matched by its tenant and id. The rows go in as one array per
   * column (as a batch of punches does: punches/store.ts); one alone, the common case of a quiet
   * dispatcher, by a statement prepared once per connection. Answers, in the order given, whether
   * each claim held, and the endpoint's status (null once deleted), which says whether its run may
   * go on.
   */
  async recordSuccesses(
    successes: readonly SuccessfulAttempt[],
  ): Promise<{ owned: boolean; endpointStatus: string | null }[]> {
    if (successes.length === 0) return []
    const [only] = successes
    if (successes.length === 1 && only) return [await this.recordSuccess(only)]
    const column = <T>(f: (s: SuccessfulAttempt) => T) => successes.map(f)
    const result = await sql<{ owned: boolean; endpoint_status: string | null }>`
      with input as (
        select * from unnest(${column((s) => s.delivery.tenant_id)}::text[],
          ${column((s) => s.delivery.id)}::text[], ${column((s) => s.delivery.endpoint_id)}::text[],
          ${column((s) => s.lease)}::bigint[], ${column((s) => s.at)}::bigint[],
          ${column((s) => s.attempt.id)}::text[], ${column((s) => s.attempt.number)}::integer[],
          ${column((s) => s.attempt.trigger)}::text[], ${column((s) => s.attempt.started_at)}::bigint[],
          ${column((s) => s.attempt.duration_ms)}::integer[],
          ${column((s) => s.attempt.response_status)}::integer[],
          ${column((s) => s.attempt.response_body)}::text[], ${column((s) => s.attempt.error)}::text[])
          with ordinality as i(tenant_id, id, endpoint_id, lease, at, attempt_id, number, trigger,
            started_at, duration_ms, response_status, response_body, error, n)
      ), owned as (
        update webhook_deliveries d
        set status = 'succeeded', attempts = i.number, last_attempt_at = i.at, claimed_until = null,
          next_trigger = 'automatic', next_attempt_at = null, updated_at = i.at
        from input i
        where d.tenant_id = i.tenant_id and d.id = i.id and d.claimed_until = i.lease
        returning d.tenant_id, d.id
      ), logged as (
        insert into webhook_attempts (id, tenant_id, delivery_id, number, trigger, started_at,
          duration_ms, response_status, response_body, error)
        select i.attempt_id, i.tenant_id, i.id, i.number, i.trigger, i.started_at, i.duration_ms,
          i.response_status, i.response_body, i.error
        from input i join owned o on o.tenant_id = i.tenant_id and o.id = i.id
      ), healed as (
        update webhook_endpoints e set failing_since = null, updated_at = h.at
        from (select i.tenant_id, i.endpoint_id, max(i.at) as at
              from input i join owned o on o.tenant_id = i.tenant_id and o.id = i.id
              group by i.tenant_id, i.endpoint_id) h
        where e.tenant_id = h.tenant_id and e.id = h.endpoint_id and e.failing_since is not null
          and e.deleted_at is null
      )
      select o.id is not null as owned, e.status as endpoint_status
      from input i
      left join owned o on o.tenant_id = i.tenant_id and o.id = i.id
      left join webhook_endpoints e on e.tenant_id = i.tenant_id and e.id = i.endpoint_id
        and e.deleted_at is null
      order by i.n
    `.execute(this.db)
    return result.rows.map((r) => ({ owned: r.owned, endpointStatus: r.endpoint_status }))
  }

  /** One success, as `recordSuccesses` writes each (see there). */
  private async recordSuccess({
    delivery,
    lease,
    attempt,
    at,
  }: SuccessfulAttempt): Promise<{ owned: boolean; endpointStatus: string | null }> {
    const { tenant_id: tenantId, id, endpoint_id: endpointId } = delivery
    // Parameters in a SELECT list have no type of their own: the casts give them the columns'.
    const result = await sql<{ owned: number; endpoint_status: string | null }>`${sql.raw(PREPARED_MARK)}
      with owned as (
        update webhook_deliveries
        set status = 'succeeded', attempts = ${attempt.number}, last_attempt_at = ${at},
          claimed_until = null, next_trigger = 'automatic', next_attempt_at = null, updated_at = ${at}
        where tenant_id = ${tenantId} and id = ${id} and claimed_until = ${lease}
        returning id
      ), logged as (
        insert into webhook_attempts (id, tenant_id, delivery_id, number, trigger, started_at,
          duration_ms, response_status, response_body, error)
        select ${attempt.id}, ${tenantId}, owned.id, ${attempt.number}::integer, ${attempt.trigger},
          ${attempt.started_at}::bigint, ${attempt.duration_ms}::integer,
          ${attempt.response_status}::integer, ${attempt.response_body}::text, ${attempt.error}::text
        from owned
      ), healed as (
        update webhook_endpoints set failing_since = null, updated_at = ${at}
        where tenant_id = ${tenantId} and id = ${endpointId} and failing_since is not null
          and deleted_at is null and exists (select 1 from owned)
      )
      select (select count(*) from owned)::integer as owned,
        (select status from webhook_endpoints
          where tenant_id = ${tenantId} and id = ${endpointId} and deleted_at is null) as endpoint_status
    `.execute(this.db)
    const row = result.rows[0]
    return { owned: row?.owned === 1, endpointStatus: row?.endpoint_status ?? null }
  }

  /**
   * Since when (µs) the dispatchers have owed work, across tenants, or null if they owe none: the
   * oldest event not yet fanned out into deliveries, or the earliest due time of a delivery to an
   * active endpoint that is due by `now` (a first attempt is due from its event's time). For the
   * operators' metrics, which never name a tenant. A delivery waiting out a retry's backoff, or for a
   * paused, disabled or deleted endpoint, is not owed: it waits by design, and counting it would let
   * one tenant's receiver hold the figure up for days. Each query reads an index in order and stops
   * at its first row, whatever the size of the tables.
   */
  async owedSince(now: number): Promise<number | null> {
    const event = await this.db
      .selectFrom('webhook_events')
      .select('created_at')
      .where('fanned_out', '=', 0)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst()
    const delivery = await this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select('d.next_attempt_at')
      .where('d.status', 'in', ['pending', 'failed'])
      .where('d.next_attempt_at', '<=', now)
      .where('e.status', '=', 'active')
      .where('e.deleted_at', 'is', null)
      .orderBy('d.next_attempt_at')
      .limit(1)
      .executeTakeFirst()
    const times = [event?.created_at, delivery?.next_attempt_at].filter((t) => t != null).map(Number)
    return times.length === 0 ? null : Math.min(...times)
  }

  /** Changes a delivery; false if no row was changed (with `claimedUntil`: the claim had passed). */
  async update(
    tenantId: string,
    id: string,
    changes: DeliveryChanges,
    atMicros: number,
    /** Only while this claim holds: a dispatcher's write of its attempt's outcome. */
    claimedUntil?: number,
  ): Promise<boolean> {
    let q = stampedUpdate(this.db, 'webhook_deliveries', tenantId, id, changes, atMicros)
    if (claimedUntil !== undefined) q = q.where('claimed_until', '=', claimedUntil)
    const result = await q.executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  /**
   * Makes a failed or exhausted delivery due now, for a manual attempt; false if it is not one, or if
   * an attempt of it is in flight (a live claim): that attempt's outcome would overwrite the schedule,
   * and the retry asked for would silently not happen. One conditional update, so a claim made
   * meanwhile, by this dispatcher or another instance's, is seen.
   */
  async scheduleManualAttempt(tenantId: string, id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', next_attempt_at: now, next_trigger: 'manual', updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .where('status', 'in', ['failed', 'exhausted'])
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  }

  async list(tenantId: string, filter: DeliveryListFilter): Promise<(DeliveryRow & PayloadMeta)[]> {
    let q = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
      .selectAll('d')
      .select(['v.body_bytes', 'v.body_sha256'])
      .where('d.tenant_id', '=', tenantId)
    if (filter.endpointId !== undefined) q = q.where('d.endpoint_id', '=', filter.endpointId)
    if (filter.status !== undefined) q = q.where('d.status', '=', filter.status)
    if (filter.eventType !== undefined) q = q.where('d.event_type', '=', filter.eventType)
    if (filter.from !== undefined) q = q.where('d.created_at', '>=', filter.from)
    if (filter.to !== undefined) q = q.where('d.created_at', '<', filter.to)
    if (filter.beforeId !== undefined) q = q.where('d.id', '<', filter.beforeId)
    return q.orderBy('d.id', 'desc').limit(filter.limit).execute()
  }

  async get(
    tenantId: string,
    id: string,
  ): Promise<(DeliveryRow & PayloadMeta & { body: string }) | undefined> {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
      .selectAll('d')
      .select(['v.body', 'v.body_bytes', 'v.body_sha256'])
      .where('d.tenant_id', '=', tenantId)
      .where('d.id', '=', id)
      .executeTakeFirst()
  }

  async attempts(tenantId: string, deliveryId: string): Promise<AttemptRow[]> {
    return this.db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('delivery_id', '=', deliveryId)
      .orderBy('number')
      .execute()
  }

  /** Failed and exhausted deliveries of an endpoint created since `since`, for a replay. */
  async failedSince(tenantId: string, endpointId: string, since: number): Promise<DeliveryRow[]> {
    return this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('endpoint_id', '=', endpointId)
      .where('status', 'in', ['failed', 'exhausted'])
      .where('created_at', '>=', since)
      .orderBy('id')
      .execute()
  }
}
