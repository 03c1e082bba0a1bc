import { createHash } from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import { AppError } from '../../app-error.js'
import type { Database } from '../../db/schema.js'
import { IdempotencyStore } from './store.js'

/** How long a key is remembered. The IETF draft leaves it to the server; 24 h covers any sane retry. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600

export interface StoredResponse {
  status: number
  body: unknown
}

export interface IdempotentRequest {
  key: string
  fingerprint: string
}

/** Thrown inside a transaction when another request with the same key committed first. */
export class IdempotencyRace extends Error {
  constructor() {
    super('idempotency key taken by a concurrent request')
    this.name = 'IdempotencyRace'
  }
}

/**
 * `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header): the first response to a key is
 * stored in the same transaction as the change it reports, so a retry gets that response and never
 * a second change. A key reused with a different request is a 422 `idempotency_key_reused`.
 */
export class IdempotencyService {
  constructor(private readonly deps: { db: Kysely<Database>; now: () => number }) {}

  private notBefore(): number {
    return this.deps.now() - IDEMPOTENCY_TTL_SECONDS * 1_000_000
  }

  /** A request's fingerprint: the operation and its parsed body, as sent. */
  request(key: string, operation: string, body: unknown): IdempotentRequest {
    const fingerprint = createHash('sha256')
      .update(operation)
      .update('\n')
      .update(JSON.stringify(body))
      .digest('base64url')
    return { key, fingerprint }
  }

  /** The stored response for this key, if any; a 422 if the key was used for something else. */
  async replay(tenantId: string, request: IdempotentRequest): Promise<StoredResponse | undefined> {
    const row = await new IdempotencyStore(this.deps.db).find(tenantId, request.key, this.notBefore())
    if (!row) return undefined
    if (row.fingerprint !== request.fingerprint) {
      throw new AppError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request in the last 24 hours. Use a new key for a new request.',
      )
    }
    return { status: row.response_status, body: JSON.parse(row.response_body) }
  }

  /** Stores the response within the caller's transaction; throws IdempotencyRace if the key is taken. */
  async record(
    trx: Transaction<Database>,
    tenantId: string,
    request: IdempotentRequest,
    response: StoredResponse,
  ) {
    const inserted = await new IdempotencyStore(trx).insert(
      tenantId,
      {
        idempotency_key: request.key,
        fingerprint: request.fingerprint,
        response_status: response.status,
        response_body: JSON.stringify(response.body),
        created_at: this.deps.now(),
      },
      this.notBefore(),
    )
    if (!inserted) throw new IdempotencyRace()
  }

  async purgeExpired(): Promise<number> {
    return new IdempotencyStore(this.deps.db).purgeExpired(this.notBefore())
  }
}
