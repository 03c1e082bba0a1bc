import type { Executor } from '../../db/executor.js'
import type { WebhookEventsTable } from '../../db/schema.js'

/** Rows per INSERT: a statement's parameters stay well under SQLite's and PostgreSQL's limits. */
const ROWS_PER_INSERT = 500

/** The outbox's table: events written in the transaction of the change they report. */
export class OutboxStore {
  constructor(private readonly db: Executor) {}

  async insertEvents(rows: readonly WebhookEventsTable[]): Promise<void> {
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      await this.db
        .insertInto('webhook_events')
        .values(rows.slice(i, i + ROWS_PER_INSERT))
        .execute()
    }
  }
}
