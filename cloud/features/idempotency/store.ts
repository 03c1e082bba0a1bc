import { deleteRowsBefore } from '../../db/delete-rows-before.js'
import type { Executor } from '../../db/executor.js'
import type { IdempotencyKeysTable } from '../../db/schema.js'

export type IdempotencyRow = IdempotencyKeysTable

export class IdempotencyStore {
  constructor(private readonly db: Executor) {}

  async find(tenantId: string, key: string, notBefore: number): Promise<IdempotencyRow | undefined> {
    return this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('idempotency_key', '=', key)
      .where('created_at', '>=', notBefore)
      .executeTakeFirst()
  }

  /**
   * Records a key, taking over an expired record of the same key. Returns false when a live record
   * already holds it: a concurrent request with that key committed first.
   */
  async insert(
    tenantId: string,
    row: Omit<IdempotencyRow, 'tenant_id'>,
    notBefore: number,
  ): Promise<boolean> {
    const result = await this.db
      .insertInto('idempotency_keys')
      .values({ ...row, tenant_id: tenantId })
      .onConflict((oc) =>
        oc
          .columns(['tenant_id', 'idempotency_key'])
          .doUpdateSet({
            fingerprint: row.fingerprint,
            response_status: row.response_status,
            response_body: row.response_body,
            response_encoding: row.response_encoding,
            credential: row.credential,
            stored_bytes: row.stored_bytes,
            created_at: row.created_at,
          })
          .where('idempotency_keys.created_at', '<', notBefore),
      )
      .returning('idempotency_key')
      .executeTakeFirst()
    return result !== undefined
  }

  /**
   * What one credential's live records hold, in bytes, and when the oldest of them was stored
   * (undefined when there is none): a range of the index idempotency_keys_credential.
   */
  async usage(
    tenantId: string,
    credential: string,
    notBefore: number,
  ): Promise<{ bytes: number; oldest: number | undefined }> {
    const row = await this.db
      .selectFrom('idempotency_keys')
      .select((eb) => [
        eb.fn.sum<number | string | null>('stored_bytes').as('bytes'),
        eb.fn.min('created_at').as('oldest'),
      ])
      .where('tenant_id', '=', tenantId)
      .where('credential', '=', credential)
      .where('created_at', '>=', notBefore)
      .executeTakeFirst()
    // PostgreSQL sums to a numeric and reads bigint as a string.
    return {
      bytes: Number(row?.bytes ?? 0),
      oldest: row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest),
    }
  }

  /** Drops records older than `beforeMicros`, across tenants: housekeeping, not a tenant's operation. */
  async purgeExpired(beforeMicros: number): Promise<number> {
    return deleteRowsBefore(this.db, 'idempotency_keys', 'created_at', beforeMicros)
  }
}
