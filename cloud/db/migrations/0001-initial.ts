import type { Kysely } from 'kysely'

// One schema for SQLite and PostgreSQL: only types both understand (text, integer, bigint), and
// times as bigint microseconds, so the stores never branch on the dialect.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('time_zone', 'text', (c) => c.notNull())
    .addColumn('backfill_days', 'integer', (c) => c.notNull())
    .addColumn('last_change_us', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()

  await db.schema
    .createTable('console_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('must_change_password', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute()
  // Sign-in is by email alone, so an email names one console user across all tenants.
  await db.schema.createIndex('console_users_email').on('console_users').column('email').unique().execute()
  await db.schema
    .createIndex('console_users_tenant')
    .on('console_users')
    .columns(['tenant_id', 'id'])
    .execute()

  await db.schema
    .createTable('employees')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('employee_code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('department', 'text')
    .addColumn('location', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('employees_tenant_code')
    .on('employees')
    .columns(['tenant_id', 'employee_code'])
    .unique()
    .execute()
  // One index per listing order: by id (full listing), by status then id, by (updated_at, id) (sync).
  await db.schema.createIndex('employees_tenant_id').on('employees').columns(['tenant_id', 'id']).execute()
  await db.schema
    .createIndex('employees_tenant_status')
    .on('employees')
    .columns(['tenant_id', 'status', 'id'])
    .execute()
  await db.schema
    .createIndex('employees_tenant_updated')
    .on('employees')
    .columns(['tenant_id', 'updated_at', 'id'])
    .execute()

  await db.schema
    .createTable('punches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('employee_id', 'text', (c) => c.notNull().references('employees.id'))
    .addColumn('employee_code', 'text', (c) => c.notNull())
    .addColumn('punch_type', 'text', (c) => c.notNull())
    .addColumn('punched_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('device_id', 'text')
    .addColumn('source', 'text')
    .addColumn('external_id', 'text')
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .execute()
  // The permanent per-tenant dedupe key (docs/development/architecture.md#idempotency); NULLs never collide.
  await db.schema
    .createIndex('punches_tenant_external')
    .on('punches')
    .columns(['tenant_id', 'external_id'])
    .unique()
    .execute()
  await db.schema
    .createIndex('punches_tenant_time')
    .on('punches')
    .columns(['tenant_id', 'punched_at', 'id'])
    .execute()
  await db.schema
    .createIndex('punches_tenant_employee_time')
    .on('punches')
    .columns(['tenant_id', 'employee_code', 'punched_at', 'id'])
    .execute()

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'idempotency_key'])
    .execute()
  await db.schema
    .createIndex('idempotency_keys_created')
    .on('idempotency_keys')
    .column('created_at')
    .execute()

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('key_prefix', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute()
  await db.schema.createIndex('api_keys_hash').on('api_keys').column('key_hash').unique().execute()
  await db.schema.createIndex('api_keys_tenant').on('api_keys').columns(['tenant_id', 'id']).execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'idempotency_keys', 'punches', 'employees', 'console_users', 'tenants']) {
    await db.schema.dropTable(table).execute()
  }
}
