import { hashSecret } from '../../auth/secret-format.js'

/** How long a credential's lookup is reused. It bounds how stale a rate limit or `lastUsedAt` can be. */
export const CREDENTIAL_CACHE_TTL_MS = 10_000
/** Entries kept at most: a caller cycling through many keys evicts the oldest, never grows memory. */
export const CREDENTIAL_CACHE_MAX_ENTRIES = 10_000

/**
 * Recent lookups of presented bearer credentials, by the SHA-256 of the secret (the secret itself is
 * not kept). On PostgreSQL an entry is only a hint: whoever uses one must have the write it
 * authorizes check, in the same statement, that the credential is still live
 * (docs/decisions/0091-credential-cache-checked-by-the-write.md). On SQLite the database says when
 * any credential may have changed, and the cache is emptied then
 * (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md).
 */
export class CredentialCache<T> {
  private readonly entries = new Map<string, { value: T; until: number }>()

  constructor(
    private readonly options: {
      ttlMs?: number
      maxEntries?: number
      /** Milliseconds, for expiry; Date.now unless a test controls the clock. */
      clock?: () => number
    } = {},
  ) {}

  get(secret: string): T | undefined {
    const key = hashSecret(secret)
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.until <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    return entry.value
  }

  /** Never kept past `untilMs` (the clock's milliseconds): the credential's expiry, say. */
  set(secret: string, value: T, untilMs = Number.POSITIVE_INFINITY): void {
    const key = hashSecret(secret)
    // Re-inserted at the end: the Map's order is the order of last lookups, oldest first.
    this.entries.delete(key)
    const until = Math.min(this.now() + (this.options.ttlMs ?? CREDENTIAL_CACHE_TTL_MS), untilMs)
    this.entries.set(key, { value, until })
    const max = this.options.maxEntries ?? CREDENTIAL_CACHE_MAX_ENTRIES
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break
      this.entries.delete(oldest)
    }
  }

  delete(secret: string): void {
    this.entries.delete(hashSecret(secret))
  }

  clear(): void {
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }

  private now(): number {
    return (this.options.clock ?? Date.now)()
  }
}
