import type { Database as BetterSqlite, Statement } from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/**
 * The better-sqlite3 connection as Kysely's SQLite driver sees it, with two additions:
 *
 * - Prepared statements are kept (least recently used out first). Kysely prepares every statement
 *   anew, which costs more than running a small query, and our queries are a few dozen shapes.
 *   Safe because Kysely runs one statement at a time on the one connection and never leaves an
 *   iterator open (we do not stream).
 * - Commits are counted, exactly: a write statement after which no transaction is open has just
 *   committed (an explicit COMMIT, or a statement in autocommit). {@link WalSync} uses the count to
 *   know whether anything awaits an fsync.
 */
export class SqliteConnection implements SqliteDatabase {
  private readonly cache = new Map<string, SqliteStatement>()
  commits = 0

  constructor(
    private readonly database: BetterSqlite,
    private readonly capacity = 500,
  ) {}

  close(): void {
    this.database.close()
  }

  prepare(sql: string): SqliteStatement {
    const hit = this.cache.get(sql)
    if (hit) {
      this.cache.delete(sql)
      this.cache.set(sql, hit)
      return hit
    }
    const statement = this.counting(this.database.prepare(sql))
    this.cache.set(sql, statement)
    if (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) this.cache.delete(oldest)
    }
    return statement
  }

  private counting(statement: Statement): SqliteStatement {
    if (statement.reader) return statement as unknown as SqliteStatement
    return {
      reader: false,
      all: (parameters) => statement.all(parameters),
      iterate: (parameters) => statement.iterate(parameters),
      run: (parameters) => {
        const result = statement.run(parameters)
        if (!this.database.inTransaction) this.commits++
        return result
      },
    }
  }
}
