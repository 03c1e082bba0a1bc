import type { Kysely } from 'kysely'
import type { Executor } from './executor.js'
import type { Database } from './schema.js'

/** The columns of a table that hold a number: the µs times that rows may be purged by. */
type TimeColumn<T extends keyof Database> = {
  [C in keyof Database[T]]: Database[T][C] extends number ? C : never
}[keyof Database[T]] &
  string

/**
 * Housekeeping across tenants: deletes the rows of `table` whose `column` (µs) is before
 * `beforeMicros`, and answers how many went. For rows that can never be used again once that time has
 * passed (expired tokens, remembered responses past their time).
 */
export async function deleteRowsBefore<T extends keyof Database & string>(
  db: Executor,
  table: T,
  column: TimeColumn<T>,
  beforeMicros: number,
): Promise<number> {
  // The table's name is a value here, which Kysely's types cannot follow: viewed as a table of numbers.
  const view = db as unknown as Kysely<Record<string, Record<string, number>>>
  const [name, time]: [string, string] = [table, column]
  const result = await view.deleteFrom(name).where(time, '<', beforeMicros).executeTakeFirst()
  return Number(result.numDeletedRows)
}
