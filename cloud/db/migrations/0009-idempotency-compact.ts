import { type Kysely, sql } from 'kysely'

// Stored Idempotency-Key responses are kept compactly and counted per credential.
//
// - response_encoding: how response_body holds the response. 'json' is the JSON text (every row
//   before this migration); 'br' is the JSON text compressed with Brotli (RFC 7932), in base64 so
//   that one text column holds it on SQLite and PostgreSQL alike.
// - credential: what stored it (the API key, or the OAuth app all of whose tokens count as one);
//   null for rows stored before this migration, which count against no one and expire within 24 h.
// - stored_bytes: what the row holds (key, fingerprint and response as stored), summed per
//   credential against its allowance. The index serves that sum without reading the table.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('response_encoding', 'text', (c) => c.notNull().defaultTo('json'))
    .execute()
  await db.schema.alterTable('idempotency_keys').addColumn('credential', 'text').execute()
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('stored_bytes', 'integer', (c) => c.notNull().defaultTo(0))
    .execute()
  await sql`update idempotency_keys
    set stored_bytes = length(idempotency_key) + length(fingerprint) + length(response_body)`.execute(db)
  await db.schema
    .createIndex('idempotency_keys_credential')
    .on('idempotency_keys')
    .columns(['tenant_id', 'credential', 'created_at', 'stored_bytes'])
    .execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_credential').execute()
  // Compressed responses cannot be read once the column saying so is gone: forget them.
  await sql`delete from idempotency_keys where response_encoding <> 'json'`.execute(db)
  await db.schema.alterTable('idempotency_keys').dropColumn('stored_bytes').execute()
  await db.schema.alterTable('idempotency_keys').dropColumn('credential').execute()
  await db.schema.alterTable('idempotency_keys').dropColumn('response_encoding').execute()
}
