import { type Kysely, PostgresAdapter, sql } from 'kysely'

/**
 * Closes the two ways around 0002's append-only triggers (found by tests): PostgreSQL fires no row
 * trigger on TRUNCATE, and SQLite's INSERT OR REPLACE deletes the old row without firing delete
 * triggers. Neither stops the table's owner from dropping triggers: this guards against code and
 * accidents, not a deliberate operator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create trigger audit_log_no_truncate before truncate on audit_log
      for each statement execute function hajri_audit_log_append_only()`.execute(db)
  } else {
    await sql`
      create trigger audit_log_no_replace before insert on audit_log
      when exists (select 1 from audit_log where id = new.id)
      begin select raise(abort, 'audit_log is append-only'); end`.execute(db)
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger if exists audit_log_no_truncate on audit_log`.execute(db)
  } else {
    await sql`drop trigger if exists audit_log_no_replace`.execute(db)
  }
}
