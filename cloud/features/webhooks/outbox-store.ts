import type { Executor } from '../../db/executor.js'
import { prepareQuery } from '../../db/prepared-query.js'
import type { WebhookEventsTable } from '../../db/schema.js'

/** Rows per INSERT: a statement's parameters stay well under SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 500

// The one event of most changes (a single punch's): built and compiled once (see prepareQuery).
const insertOne = prepareQuery(
  (
    db,
    id: string,
    tenantId: string,
    type: string,
    body: string,
    bodyBytes: number,
    bodySha256: string,
    endpointId: string | null,
    createdAt: number,
    fannedOut: number,
  ) =>
    db.insertInto('webhook_events').values({
      id,
      tenant_id: tenantId,
      type,
      body,
      body_bytes: bodyBytes,
      body_sha256: bodySha256,
      endpoint_id: endpointId,
      created_at: createdAt,
      fanned_out: fannedOut,
    }),
  ['id', 'tenant_id', 'type', 'body', -1, 'body_sha256', 'endpoint_id', -2, -3],
)

/** The outbox's table: events written in the transaction of the change they report. */
export class OutboxStore {
  constructor(private readonly db: Executor) {}

  async insertEvents(rows: readonly WebhookEventsTable[]): Promise<void> {
    const [only] = rows
    if (rows.length === 1 && only) {
      const { id, tenant_id, type, body, body_bytes, body_sha256, endpoint_id, created_at, fanned_out } = only
      await insertOne(
        this.db,
        id,
        tenant_id,
        type,
        body,
        body_bytes,
        body_sha256,
        endpoint_id,
        created_at,
        fanned_out,
      )
      return
    }
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      await this.db
        .insertInto('webhook_events')
        .values(rows.slice(i, i + ROWS_PER_INSERT))
        .execute()
    }
  }
}
