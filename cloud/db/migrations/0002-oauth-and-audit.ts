import { type Kysely, PostgresAdapter, sql } from 'kysely'

// OAuth apps with rotating client secrets, access tokens (docs/decisions/0016-oauth-client-credentials.md),
// and the audit log.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth_apps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute()
  await db.schema.createIndex('oauth_apps_client_id').on('oauth_apps').column('client_id').unique().execute()
  await db.schema.createIndex('oauth_apps_tenant').on('oauth_apps').columns(['tenant_id', 'id']).execute()

  // An app has one current secret (expires_at null) and, after a rotation, old ones that keep
  // working until their expires_at.
  await db.schema
    .createTable('oauth_client_secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('oauth_apps.id'))
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('secret_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute()
  await db.schema
    .createIndex('oauth_client_secrets_app')
    .on('oauth_client_secrets')
    .column('app_id')
    .execute()

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('app_id', 'text', (c) => c.notNull().references('oauth_apps.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute()
  await db.schema.createIndex('oauth_tokens_hash').on('oauth_tokens').column('token_hash').unique().execute()
  await db.schema.createIndex('oauth_tokens_expiry').on('oauth_tokens').column('expires_at').execute()

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('details', 'text')
    .execute()
  await db.schema.createIndex('audit_log_tenant').on('audit_log').columns(['tenant_id', 'id']).execute()
  await db.schema
    .createIndex('audit_log_target')
    .on('audit_log')
    .columns(['tenant_id', 'target_id', 'id'])
    .execute()

  // Append-only, enforced by the database itself: no UPDATE or DELETE of an audit entry succeeds,
  // whatever code or operator tries it.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function hajri_audit_log_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_log is append-only';
      end $$`.execute(db)
    await sql`
      create trigger audit_log_append_only before update or delete on audit_log
      for each row execute function hajri_audit_log_append_only()`.execute(db)
  } else {
    for (const operation of ['update', 'delete']) {
      await sql`
        create trigger ${sql.raw(`audit_log_no_${operation}`)} before ${sql.raw(operation)} on audit_log
        begin select raise(abort, 'audit_log is append-only'); end`.execute(db)
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['audit_log', 'oauth_tokens', 'oauth_client_secrets', 'oauth_apps']) {
    await db.schema.dropTable(table).execute()
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop function if exists hajri_audit_log_append_only()`.execute(db)
  }
}
