import { sql } from 'kysely'
import type { Executor } from '../../db/executor.js'
import type { ConsoleSignInFailuresTable } from '../../db/schema.js'
import { type DelayRule, delayAfter } from './sign-in-delays.js'

const SECOND = 1_000_000

export type SignInCounterRow = ConsoleSignInFailuresTable

/** The failed-sign-in counters of the sign-in throttle (sign-in-throttle.ts), one row per key. */
export class SignInThrottleStore {
  constructor(private readonly db: Executor) {}

  read(key: string): Promise<SignInCounterRow | undefined> {
    return this.db
      .selectFrom('console_sign_in_failures')
      .selectAll()
      .where('key', '=', key)
      .executeTakeFirst()
  }

  async deleteKeys(keys: string[]): Promise<void> {
    await this.db.deleteFrom('console_sign_in_failures').where('key', 'in', keys).execute()
  }

  /** Deletes `key`, and every `pair:` key that ends in `pairSuffix`. */
  async deleteKeyAndPairsEndingWith(key: string, pairSuffix: string): Promise<void> {
    // Characters as SQL counts them (code points), not UTF-16 units.
    const length = [...pairSuffix].length
    await this.db
      .deleteFrom('console_sign_in_failures')
      .where((eb) =>
        eb.or([
          eb('key', '=', key),
          eb.and([
            eb('key', 'like', 'pair:%'),
            eb(sql`substr(key, length(key) - ${length - 1})`, '=', pairSuffix),
          ]),
        ]),
      )
      .execute()
  }

  /** Deletes the counters whose window started at or before `windowOver` and whose wait has passed. */
  async deleteExpired(windowOver: number, now: number): Promise<number> {
    const result = await this.db
      .deleteFrom('console_sign_in_failures')
      .where('window_started_at', '<=', windowOver)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  /**
   * One more failure for `key`, atomically (an upsert, so concurrent instances cannot lose a count):
   * the first of a new window when the last one started at or before `windowOver`, and the wait it
   * earns. `unlessWaiting`: changes nothing, and answers undefined, while the key's wait runs. The SET
   * expressions all read the row as it was (SQL semantics, in PostgreSQL and SQLite alike).
   */
  async charge(
    key: string,
    rule: DelayRule,
    now: number,
    windowOver: number,
    unlessWaiting: boolean,
  ): Promise<{ failures: number } | undefined> {
    const failures = sql.ref<number>('console_sign_in_failures.failures')
    const started = sql.ref<number>('console_sign_in_failures.window_started_at')
    const locked = sql.ref<number | null>('console_sign_in_failures.locked_until')
    const next = sql<number>`case when ${started} <= ${windowOver} then 1 else ${failures} + 1 end`
    // The wait after the next failure, as SQL: 0 within the free failures, then doubling to the cap.
    // Cast: in a CASE of parameters alone, PostgreSQL would take them for text.
    const at = (seconds: number) => sql`cast(${now + seconds * SECOND} as bigint)`
    const cases = [sql`when ${next} <= ${rule.free} then null`]
    for (let n = rule.free + 1; delayAfter(n - 1, rule) < rule.maxDelaySeconds; n++)
      cases.push(sql`when ${next} = ${n} then ${at(delayAfter(n, rule))}`)
    const until = sql<number | null>`case ${sql.join(cases, sql` `)} else ${at(rule.maxDelaySeconds)} end`
    const first = delayAfter(1, rule)
    const row = await this.db
      .insertInto('console_sign_in_failures')
      .values({
        key,
        failures: 1,
        window_started_at: now,
        locked_until: first > 0 ? now + first * SECOND : null,
      })
      .onConflict((oc) => {
        const update = oc.column('key').doUpdateSet({
          failures: next,
          window_started_at: sql<number>`case when ${started} <= ${windowOver} then ${now} else ${started} end`,
          locked_until: until,
        })
        return unlessWaiting
          ? update.where((eb) =>
              eb.or([eb(locked, 'is', null), eb(locked, '<=', now), eb(started, '<=', windowOver)]),
            )
          : update
      })
      .returning(['failures'])
      .executeTakeFirst()
    return row
  }
}
