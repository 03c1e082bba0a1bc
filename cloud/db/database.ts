import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import SqliteDatabase from 'better-sqlite3'
import { Kysely, type LogEvent, SqliteDialect } from 'kysely'
import pg from 'pg'
import {
  type DatabaseTarget,
  DEFAULT_DATABASE_POOL_SIZE,
  parseDatabaseUrl,
} from '../settings/database-url.js'
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js'
import { type RunInTransaction, transactionRunner } from './group-commit.js'
import { nameMarkedStatements } from './named-statements.js'
import type { Database } from './schema.js'
import { SecretBox } from './secret-box.js'
import { loadSecretKey, type SecretKeySettings } from './secret-key.js'
import { type ChangeCounter, sqliteChangeCounter, type WatchedTables } from './sqlite-change-counter.js'
import { SqliteConnection } from './sqlite-connection.js'
import { openWalFile, type SyncableFile, WalSync } from './wal-sync.js'

export type DialectName = 'sqlite' | 'postgres'

export interface DatabaseHandle {
  db: Kysely<Database>
  dialect: DialectName
  /**
   * Resolves once every transaction committed so far is on disk. Await it before telling anyone
   * about data (the app does, for every response). Immediate on PostgreSQL, whose COMMIT is durable.
   */
  durable(): Promise<void>
  /** Runs write work in a transaction, shared with concurrent work where that pays (SQLite). */
  transact: RunInTransaction
  /**
   * Seals and opens the secrets kept with this database (webhook signing secrets). The key is
   * loaded on first use, so a deployment that has no webhooks needs no key (see secret-key.ts).
   */
  secretBox(): SecretBox
  /** Where the data lives, for logs; a PostgreSQL URL's password is left out. */
  describe: string
  /**
   * On SQLite, a counter that moves whenever a row of these tables may have changed, by this process
   * or another (sqlite-change-counter.ts); one per set of tables. Undefined on PostgreSQL, where
   * other instances' changes cannot be known without asking.
   */
  watchChanges?(tables: WatchedTables): ChangeCounter
  /** The PostgreSQL pool's connections as of now, for the metrics (undefined on SQLite). */
  poolStats?(): { total: number; idle: number; waiting: number }
  close(): Promise<void>
}

interface OpenDatabaseOptions extends SecretKeySettings {
  poolSize?: number
  /** Against which a relative SQLite path is read; the process's working directory by default. */
  cwd?: string
  /** How the SQLite WAL file is opened for fsyncs; tests replace it to control the disk. */
  openWal?: (databasePath: string) => Promise<SyncableFile>
  /** Told of errors on idle PostgreSQL connections, which would otherwise crash the process. */
  onPoolError?: (err: Error) => void
  /** Told how long each statement took, in seconds (the metrics' query histogram). */
  onQuery?: (seconds: number) => void
}

// int8 (bigint, count(*)) as a number: our µs times and counts stay below 2^53.
const INT8_OID = 20
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

function lazySecretBox(options: SecretKeySettings, target: DatabaseTarget): () => SecretBox {
  let box: SecretBox | undefined
  return () => {
    box ??= new SecretBox(loadSecretKey(options, target))
    return box
  }
}

/**
 * The database holds every tenant's data, as secret.key beside it holds the key to its secrets: only
 * the service's user may read it. The directory is made 0700 when we make it, and the database file
 * 0600 before SQLite opens it: SQLite gives the -wal and -shm files it makes the database file's mode
 * (its unix VFS, "same permissions as the database"). Files left by an earlier version with a wider
 * mode are narrowed to 0600.
 */
function keepPrivate(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600)
}

/** Kysely's log hook, timing every statement, when someone is told of it. */
function queryLog({ onQuery }: OpenDatabaseOptions): ((event: LogEvent) => void) | undefined {
  if (!onQuery) return undefined
  return (event) => onQuery(event.queryDurationMillis / 1000)
}

export function openDatabase(url: string, options: OpenDatabaseOptions = {}): DatabaseHandle {
  const target = parseDatabaseUrl(url, options.cwd)
  const secretBox = lazySecretBox(options, target)
  if (target.dialect === 'sqlite') {
    if (target.path !== ':memory:') keepPrivate(target.path)
    const sqlite = new SqliteDatabase(target.path)
    sqlite.pragma('journal_mode = WAL')
    // NORMAL: a COMMIT writes the WAL without an fsync on the event loop's thread; WalSync makes it
    // durable off the thread, shared by concurrent commits. Together they give what FULL gives: a
    // punch answered 201 survives a power cut (the agent deletes it from its spool on that answer).
    sqlite.pragma('synchronous = NORMAL')
    sqlite.pragma('busy_timeout = 5000')
    sqlite.pragma('foreign_keys = ON')
    const connection = new SqliteConnection(sqlite)
    const path = target.path
    const openWal = options.openWal ?? openWalFile
    const wal = path === ':memory:' ? undefined : new WalSync(connection, () => openWal(path))
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: connection }),
      log: queryLog(options),
    })
    const counters = new Map<string, ChangeCounter>()
    return {
      db,
      dialect: 'sqlite',
      watchChanges: (tables) => {
        const key = JSON.stringify(Object.entries(tables).sort(([a], [b]) => a.localeCompare(b)))
        let counter = counters.get(key)
        if (!counter) {
          counter = sqliteChangeCounter(sqlite, tables)
          counters.set(key, counter)
        }
        return counter
      },
      durable: () => wal?.durable() ?? Promise.resolve(),
      transact: transactionRunner(db, 'sqlite'),
      secretBox,
      describe: `sqlite:${target.path}`,
      close: async () => {
        await wal?.close()
        await db.destroy()
      },
    }
  }
  const pool = new pg.Pool({
    connectionString: target.url,
    max: options.poolSize ?? DEFAULT_DATABASE_POOL_SIZE,
    types: pgTypes,
  })
  // The statements every request runs are prepared once per connection (named-statements.ts).
  pool.on('connect', nameMarkedStatements)
  const onPoolError = options.onPoolError ?? (() => {})
  pool.on('error', onPoolError)
  // pg-pool hears a connection's errors only while it is idle. One in use with no statement running
  // (between two statements of a transaction) that PostgreSQL ends (a restart, pg_terminate_backend)
  // emits 'error' on its client, and unheard that ended the process (found by the chaos
  // test). Heard while in use, the next statement on it fails instead, and the pool drops it on release.
  const inUse = (err: Error) => onPoolError(err)
  pool.on('acquire', (client) => client.on('error', inUse))
  pool.on('release', (_err, client) => client.removeListener('error', inUse))
  const db = new Kysely<Database>({
    dialect: new CurrentSchemaPostgresDialect({ pool }),
    log: queryLog(options),
  })
  const safe = new URL(target.url)
  safe.password = ''
  return {
    db,
    dialect: 'postgres',
    durable: () => Promise.resolve(),
    transact: transactionRunner(db, 'postgres'),
    secretBox,
    describe: safe.toString(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  }
}
