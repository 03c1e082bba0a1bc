import { type CompiledQuery, type RawBuilder, sql } from 'kysely'
import type { LiveCredentialCheck } from '../auth/auth-context.js'
import type { Executor } from './executor.js'
import { prepareQuery } from './prepared-query.js'

/** What a statement checks of a cached caller: the check, at the request's time (µs). */
export type LiveCredentialAt = LiveCredentialCheck & { now: number }

/**
 * A subquery that finds a row when the cached credential is still live at `now` (the checks
 * `authenticate` makes: not revoked, not expired, and for an access token its app not revoked) and
 * its tenant's settings are still those the request was read with. Scoped to the tenant (a value, or
 * a column already bound to it), like every statement. Every parameter is compared with a column,
 * which gives it its type on PostgreSQL, so the same text serves SQLite. Its parameters come in the
 * order id, now, time zone, backfill days. A statement that includes it is as sure of its caller as
 * one after a lookup: a revocation committed before the statement starts is in what it reads
 * (docs/decisions/0091-credential-cache-checked-by-the-write.md,
 * docs/decisions/0094-reads-check-a-cached-credential.md).
 */
export function liveCredential(
  tenant: string | RawBuilder<unknown>,
  c: LiveCredentialAt,
): RawBuilder<unknown> {
  const tenantUnchanged = sql`t.time_zone = ${c.timeZone} and t.backfill_days = ${c.backfillDays}`
  return c.kind === 'api_key'
    ? sql`select 1 from api_keys k join tenants t on t.id = k.tenant_id
        where k.tenant_id = ${tenant} and k.id = ${c.id} and k.revoked_at is null
          and k.expires_at > ${c.now} and ${tenantUnchanged}`
    : sql`select 1 from oauth_tokens k join oauth_apps a on a.id = k.app_id and a.tenant_id = k.tenant_id
        join tenants t on t.id = k.tenant_id
        where k.tenant_id = ${tenant} and k.id = ${c.id} and k.revoked_at is null and a.revoked_at is null
          and k.expires_at > ${c.now} and ${tenantUnchanged}`
}

type CachedCaller = [credentialId: string, now: number, timeZone: string, backfillDays: number]
// Placeholders of the caller's parameters (see prepareQuery): numbers no other placeholder uses.
const CACHED_CALLER: CachedCaller = ['cached_credential_id', -1_000_001, 'cached_time_zone', -1_000_002]

/**
 * `prepareQuery` for a statement that checks a cached caller with `liveCredential`: built and
 * compiled once for each kind of credential, since the subquery differs. `build` must use the
 * caller's parameters after all of its own.
 */
export function prepareForCachedCaller<Args extends unknown[], Row>(
  build: (db: Executor, caller: LiveCredentialAt, ...placeholders: Args) => { compile(): CompiledQuery<Row> },
  placeholders: Args,
) {
  const forKind = (kind: LiveCredentialCheck['kind']) =>
    prepareQuery(
      (db, ...all: [...Args, ...CachedCaller]) => {
        const [id, now, timeZone, backfillDays] = all.slice(placeholders.length) as CachedCaller
        return build(
          db,
          { kind, id, now, timeZone, backfillDays },
          ...(all.slice(0, placeholders.length) as Args),
        )
      },
      [...placeholders, ...CACHED_CALLER],
    )
  const queries = { api_key: forKind('api_key'), oauth_token: forKind('oauth_token') }
  return (db: Executor, caller: LiveCredentialAt, ...args: Args): Promise<Row[]> =>
    queries[caller.kind](db, ...args, caller.id, caller.now, caller.timeZone, caller.backfillDays)
}
