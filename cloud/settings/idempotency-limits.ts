/**
 * What one credential's stored responses may hold within those 24 h (HAJRI_IDEMPOTENCY_MAX_BYTES_
 * PER_CREDENTIAL). Compressed, a full 500-punch batch response takes 5 to 25 KB, so 32 MiB is
 * well over a thousand full batches a day; without a bound, a credential sending duplicate batches
 * under fresh keys at its rate limit stored tens of megabytes a minute while creating nothing.
 */
export const DEFAULT_IDEMPOTENCY_MAX_BYTES_PER_CREDENTIAL = 32 * 1024 * 1024
