import type { Kysely } from 'kysely'

// Console sign-in (docs/decisions/0045-console-sessions.md). Sessions of signed-in console users, the failed
// sign-ins that lock an email or an address out (in the database, so that every instance sees the same
// lockout), and when each user last signed in.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_users').addColumn('last_sign_in_at', 'bigint').execute()

  // The cookie holds the session secret; only its SHA-256 is kept, like every other secret, and it
  // is the session's key.
  await db.schema
    .createTable('console_sessions')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('console_users.id'))
    /** The synchronizer token for CSRF (OWASP): useless without the cookie, so kept as it is. */
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** Moved forward as the session is used (at most once a minute): the idle expiry counts from it. */
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    /** The absolute expiry, however busy the session. */
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('console_sessions_user')
    .on('console_sessions')
    .columns(['tenant_id', 'user_id'])
    .execute()
  await db.schema.createIndex('console_sessions_expiry').on('console_sessions').column('expires_at').execute()

  // One row per email and per address that failed to sign in recently. Not tenant-owned: a failed
  // sign-in has no tenant (the email may be nobody's).
  await db.schema
    .createTable('console_sign_in_failures')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_started_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_until', 'bigint')
    .execute()
  await db.schema
    .createIndex('console_sign_in_failures_window')
    .on('console_sign_in_failures')
    .column('window_started_at')
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_sign_in_failures').execute()
  await db.schema.dropTable('console_sessions').execute()
  await db.schema.alterTable('console_users').dropColumn('last_sign_in_at').execute()
}
