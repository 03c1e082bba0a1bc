import { createHash } from 'node:crypto'
import { AppError } from '../../app-error.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import { DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL } from '../../settings/idempotency-limits.js'
import { decodeResponseBody, encodeResponseBody } from './response-codec.js'
import type { IdempotencyStore } from './store.js'

/** How long a key is remembered. The IETF draft leaves it to the server; 24 h covers any sane retry. */
const IDEMPOTENCY_TTL_SECONDS = 24 * 3600

export interface StoredResponse {
  status: number
  body: unknown
}

/** An Idempotency-Key as a request brings it: the key, and the credential that sent it. */
export interface IdempotencyKeyUse {
  key: string
  /** What the allowance counts: the API key, or the OAuth app all of whose tokens count as one. */
  credential: string
}

export interface IdempotentRequest extends IdempotencyKeyUse {
  fingerprint: string
}

/** An answer, and whether it is one given before (same Idempotency-Key, or a stored externalId). */
export interface Replayable<T> {
  body: T
  replayed: boolean
}

/** Stores the response in the transaction whose stores these are. */
export type ResponseRecorder<S extends { idempotency: IdempotencyStore }> = (
  stores: S,
  response: StoredResponse,
) => Promise<void>

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
 *
 * Responses are stored compressed, and each credential may keep only so many bytes of them at a
 * time. Past that, a request under a new key is refused (429 `idempotency_storage_full`) before it
 * runs, rather than run without its response stored or an older response dropped: either of those
 * would let a retry still in flight make its change twice, which is what the key promised against.
 * Refused, nothing happened, so retrying later (or without a key) stays safe; replays of keys
 * already stored are still answered.
 */
export class IdempotencyService {
  private readonly maxBytesPerCredential: number

  constructor(
    private readonly deps: {
      stores: UnitOfWork<{ idempotency: IdempotencyStore }>
      now: () => number
      maxBytesPerCredential?: number
    },
  ) {
    this.maxBytesPerCredential = deps.maxBytesPerCredential ?? DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL
  }

  private notBefore(): number {
    return this.deps.now() - IDEMPOTENCY_TTL_SECONDS * 1_000_000
  }

  /** A request's fingerprint: the operation and its parsed body, as sent. */
  request(use: IdempotencyKeyUse, operation: string, body: unknown): IdempotentRequest {
    const fingerprint = createHash('sha256')
      .update(operation)
      .update('\n')
      .update(JSON.stringify(body))
      .digest('base64url')
    return { ...use, fingerprint }
  }

  /** The stored response for this key, if any; a 422 if the key was used for something else. */
  async replay(tenantId: string, request: IdempotentRequest): Promise<StoredResponse | undefined> {
    const row = await this.deps.stores.read.idempotency.find(tenantId, request.key, this.notBefore())
    if (!row) return undefined
    if (row.fingerprint !== request.fingerprint) {
      throw new AppError(
        'idempotency_key_reused',
        'This Idempotency-Key was used with a different request in the last 24 hours. Use a new key for a new request.',
      )
    }
    return { status: row.response_status, body: decodeResponseBody(row.response_encoding, row.response_body) }
  }

  /**
   * Refuses a request under a new key while its credential's stored responses already hold its
   * allowance. Checked before the work, so a refused request changes nothing; a credential can
   * pass its allowance by the responses of the requests it has in flight, and no more.
   */
  async assertRoom(tenantId: string, request: IdempotentRequest): Promise<void> {
    const notBefore = this.notBefore()
    const usage = await this.deps.stores.read.idempotency.usage(tenantId, request.credential, notBefore)
    if (usage.bytes < this.maxBytesPerCredential) return
    // Room comes back as the oldest responses pass their 24 hours (RFC 9110 §10.2.3).
    const oldest = usage.oldest ?? this.deps.now()
    const seconds = Math.max(1, Math.ceil((oldest - notBefore) / 1_000_000))
    throw new AppError(
      'idempotency_storage_full',
      `This credential's stored Idempotency-Key responses have reached their limit of ${this.maxBytesPerCredential} bytes for 24 hours. Nothing was done: retry after Retry-After seconds.`,
      { retryAfterSeconds: seconds },
    )
  }

  /**
   * Stores the response through `store`, the caller's transaction's, so that it commits with the change
   * it reports; throws IdempotencyRace if the key is taken.
   */
  async record(
    store: IdempotencyStore,
    tenantId: string,
    request: IdempotentRequest,
    response: StoredResponse,
  ) {
    const body = encodeResponseBody(response.body)
    const inserted = await store.insert(
      tenantId,
      {
        idempotency_key: request.key,
        fingerprint: request.fingerprint,
        response_status: response.status,
        response_body: body.text,
        response_encoding: body.encoding,
        credential: request.credential,
        stored_bytes:
          Buffer.byteLength(request.key) + request.fingerprint.length + Buffer.byteLength(body.text),
        created_at: this.deps.now(),
      },
      this.notBefore(),
    )
    if (!inserted) throw new IdempotencyRace()
  }

  /**
   * Runs `work` under an Idempotency-Key, if one is given, for this operation and body: a stored
   * response is replayed; else `work` runs and records its response, through the recorder it is
   * handed, in its own transaction. If a concurrent request with the same key commits first, this
   * one's transaction rolls back and the winner's response is replayed instead.
   */
  async once<T, S extends { idempotency: IdempotencyStore }>(
    tenantId: string,
    { key, operation, body }: { key: IdempotencyKeyUse | undefined; operation: string; body: unknown },
    work: (recordResponse: ResponseRecorder<S>) => Promise<Replayable<T>>,
  ): Promise<Replayable<T>> {
    if (!key) return work(async () => {})
    const request = this.request(key, operation, body)
    const recordResponse: ResponseRecorder<S> = (s, response) =>
      this.record(s.idempotency, tenantId, request, response)
    for (let attempt = 0; attempt < 2; attempt++) {
      const prior = await this.replay(tenantId, request)
      if (prior) return { body: prior.body as T, replayed: true }
      await this.assertRoom(tenantId, request)
      try {
        return await work(recordResponse)
      } catch (err) {
        if (!(err instanceof IdempotencyRace)) throw err
      }
    }
    throw new Error('idempotency key still contended after a retry')
  }

  async purgeExpired(): Promise<number> {
    return this.deps.stores.read.idempotency.purgeExpired(this.notBefore())
  }
}
