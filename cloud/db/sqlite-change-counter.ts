import type { Database as BetterSqlite } from 'better-sqlite3'

/**
 * Says whether rows of some tables may have changed, in this process or in any other that writes
 * the same database file (docs/decisions/0092-sqlite-credential-cache-told-by-the-database.md).
 */
export interface ChangeCounter {
  /**
   * A number that moves whenever a row of the watched tables may have been updated or deleted since
   * the last call, committed or not; undefined when it cannot tell, which a caller treats as a
   * change.
   */
  version(): number | undefined
}

/**
 * The tables to watch, each with the columns whose updates alone are not a change: bookkeeping a
 * reader of the table does not act on (a key's last use, recorded once a minute, or a tenant's last
 * change time, moved by every change to its directory or its days). Every other column counts,
 * including one added later.
 */
export type WatchedTables = Readonly<Record<string, readonly string[]>>

let counters = 0

/**
 * A {@link ChangeCounter} on one better-sqlite3 connection. Changes made through this connection
 * are heard by TEMP triggers (they exist on this connection only, so nothing is added to the file
 * and no other program that opens it needs our function) that call back into this process on every
 * DELETE from a watched table, and every UPDATE that sets one of its columns not ignored, before
 * the statement returns. Changes committed by any other
 * connection move SQLite's `data_version`, which this connection reads afresh on each call
 * (https://www.sqlite.org/pragma.html#pragma_data_version). A change of the schema (a migration,
 * here or elsewhere) may have dropped the triggers with their tables: `schema_version` moving
 * installs them again, and counts as a change.
 *
 * While a transaction is open on the connection the versions read are those of its snapshot, not
 * of the file, so the counter cannot tell and says undefined.
 */
export function sqliteChangeCounter(sqlite: BetterSqlite, tables: WatchedTables): ChangeCounter {
  const id = ++counters
  const callback = `hajri_rows_changed_${id}`
  let epoch = 0
  sqlite.function(callback, { deterministic: false }, () => {
    epoch++
    return null
  })
  // The pragmas themselves, prepared once, read in one read transaction that starts afresh on each
  // call. Not the pragma_* table-valued functions, which prepare the pragma again on every call, and
  // not two transactions: each takes and releases the WAL's read lock. Under load the old query
  // cost about 11 µs a call, a tenth of an authenticated read's time.
  const dataVersion = sqlite.prepare<[], number>('PRAGMA data_version').pluck()
  const schemaVersion = sqlite.prepare<[], number>('PRAGMA schema_version').pluck()
  const readVersions = sqlite.transaction(() => ({ data: dataVersion.get(), schema: schemaVersion.get() }))
  let installedAtSchema: number | undefined
  let lastData: number | undefined

  function install(): boolean {
    try {
      sqlite.transaction(() => {
        for (const [table, ignored] of Object.entries(tables)) {
          const columns = sqlite
            .prepare<[string], string>('SELECT name FROM pragma_table_info(?)')
            .pluck()
            .all(table)
          if (columns.length === 0) throw new Error(`no table ${table}`)
          // UPDATE OF fires when the statement sets any of the columns named, whatever their values
          // (https://www.sqlite.org/lang_createtrigger.html).
          const watched = columns.filter((c) => !ignored.includes(c)).map((c) => `"${c}"`)
          const events = [['delete', 'DELETE']]
          if (watched.length > 0) events.push(['update', `UPDATE OF ${watched.join(', ')}`])
          for (const [event, on] of events) {
            const name = `hajri_watch_${id}_${table}_${event}`
            sqlite.exec(`DROP TRIGGER IF EXISTS temp.${name}`)
            sqlite.exec(
              `CREATE TEMP TRIGGER ${name} AFTER ${on} ON main.${table} BEGIN SELECT ${callback}(); END`,
            )
          }
        }
      })()
      return true
    } catch {
      // A table not there yet (the database not migrated): nothing to watch, nothing to trust.
      return false
    }
  }

  return {
    version() {
      if (sqlite.inTransaction) return undefined
      const now = readVersions()
      if (now.data === undefined || now.schema === undefined) return undefined
      if (now.schema !== installedAtSchema) {
        epoch++
        // TEMP triggers are in the temp schema: installing them leaves main's version as it is.
        installedAtSchema = install() ? now.schema : undefined
        if (installedAtSchema === undefined) return undefined
      }
      if (now.data !== lastData) {
        lastData = now.data
        epoch++
      }
      return epoch
    },
  }
}
