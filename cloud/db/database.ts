import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import { parseDatabaseUrl } from './database-url.js'
import type { Database } from './schema.js'

export type DialectName = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
  /** Where the data lives, for logs; a PostgreSQL URL's password is left out. */
  describe: string
  close(): Promise<void>
}

export interface OpenDatabaseOptions {
  poolSize?: number
  /** Against which a relative SQLite path is read; the process's working directory by default. */
  cwd?: string
  /** Told of errors on idle PostgreSQL connections, which would otherwise crash the process. */
  onPoolError?: (err: Error) => void
}

// int8 (bigint, count(*)) as a number: our µs times and counts stay below 2^53.
const INT8_OID = 20
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

export function openDatabase(url: string, options: OpenDatabaseOptions = {}): DatabaseHandle {
  const target = parseDatabaseUrl(url, options.cwd)
  if (target.dialect === 'sqlite') {
    if (target.path !== ':memory:') mkdirSync(dirname(target.path), { recursive: true })
    const sqlite = new SqliteDatabase(target.path)
    sqlite.pragma('journal_mode = WAL')
    // FULL, not NORMAL: a punch acknowledged with 201 must survive a power cut of the server,
    // because the agent deletes it from its spool on that acknowledgement (DESIGN.md §5).
    sqlite.pragma('synchronous = FULL')
    sqlite.pragma('busy_timeout = 5000')
    sqlite.pragma('foreign_keys = ON')
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
    return { db, dialect: 'sqlite', describe: `sqlite:${target.path}`, close: () => db.destroy() }
  }
  const pool = new pg.Pool({ connectionString: target.url, max: options.poolSize ?? 10, types: pgTypes })
  pool.on('error', options.onPoolError ?? (() => {}))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  const safe = new URL(target.url)
  safe.password = ''
  return { db, dialect: 'postgres', describe: safe.toString(), close: () => db.destroy() }
}
