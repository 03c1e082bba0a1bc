import type { Kysely } from 'kysely'

// Webhook endpoints with rotating signing secrets, the event outbox, deliveries and their
// attempts; and admin tokens for the console API until the console's sign-in exists.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    /** Space-separated event types; empty means every event. */
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    /** When the current run of failures began; null while deliveries succeed. */
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute()
  await db.schema
    .createIndex('webhook_endpoints_tenant')
    .on('webhook_endpoints')
    .columns(['tenant_id', 'id'])
    .execute()

  // Signing secrets are needed to sign, so they are kept encrypted (AES-256-GCM), not hashed.
  await db.schema
    .createTable('webhook_secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('sealed_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute()
  await db.schema
    .createIndex('webhook_secrets_endpoint')
    .on('webhook_secrets')
    .column('endpoint_id')
    .execute()

  // The outbox: written in the transaction of the change that emits the event.
  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('body_bytes', 'integer', (c) => c.notNull())
    .addColumn('body_sha256', 'text', (c) => c.notNull())
    /** Only to this endpoint (a test event); null: to every endpoint that wants the type. */
    .addColumn('endpoint_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    /** 0 until deliveries have been made for it (fan-out). */
    .addColumn('fanned_out', 'integer', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_events_pending')
    .on('webhook_events')
    .columns(['fanned_out', 'id'])
    .execute()
  await db.schema.createIndex('webhook_events_created').on('webhook_events').column('created_at').execute()

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    /** What started the next attempt: 'automatic' (the schedule) or 'manual' (an admin's retry). */
    .addColumn('next_trigger', 'text', (c) => c.notNull())
    .addColumn('last_attempt_at', 'bigint')
    /** A dispatcher working on it until then (a lease: a dead instance's work is taken over). */
    .addColumn('claimed_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['tenant_id', 'endpoint_id', 'id'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_tenant')
    .on('webhook_deliveries')
    .columns(['tenant_id', 'id'])
    .execute()
  await db.schema
    .createIndex('webhook_deliveries_event')
    .on('webhook_deliveries')
    .columns(['event_id', 'endpoint_id'])
    .unique()
    .execute()

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('number', 'integer', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .execute()
  await db.schema
    .createIndex('webhook_attempts_delivery')
    .on('webhook_attempts')
    .columns(['delivery_id', 'number'])
    .execute()

  await db.schema
    .createTable('admin_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute()
  await db.schema.createIndex('admin_tokens_hash').on('admin_tokens').column('token_hash').unique().execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'admin_tokens',
    'webhook_attempts',
    'webhook_deliveries',
    'webhook_events',
    'webhook_secrets',
    'webhook_endpoints',
  ]) {
    await db.schema.dropTable(table).execute()
  }
}
