import { open } from 'node:fs/promises'
import { dirname } from 'node:path'

/** The part of a file handle WalSync needs; tests pass one whose fsync they control. */
export interface SyncableFile {
  datasync(): Promise<void>
  close(): Promise<void>
}

/** Opens a database's WAL file for fsyncs, after making its directory entry durable. */
export async function openWalFile(databasePath: string): Promise<SyncableFile> {
  const file = await open(`${databasePath}-wal`, 'r')
  const dir = await open(dirname(databasePath), 'r')
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
  return file
}

/**
 * Durability for SQLite without blocking the event loop. The connection runs WAL with
 * synchronous=NORMAL, so a COMMIT only writes the WAL; this class then fdatasyncs the WAL file on
 * libuv's thread pool. One fsync covers every commit written before it started, so concurrent
 * requests share fsyncs (group commit) and the event loop keeps serving while the disk works.
 *
 * Callers await {@link durable} before telling anyone about data: it resolves once every commit
 * made so far is on disk, which is what synchronous=FULL would give, at a fraction of the cost.
 * An fsync that fails leaves the page cache in an unknown state (PostgreSQL's "fsyncgate"), so
 * after one failure every later call fails too, and the service must be restarted.
 */
export class WalSync {
  private file: SyncableFile | undefined
  /** Commits known to be on disk. */
  private covered = 0
  private inFlight: { upTo: number; done: Promise<void> } | undefined
  private queued: Promise<void> | undefined
  private failure: Error | undefined

  /** fsyncs done so far: fewer than commits when concurrent commits share them. */
  syncs = 0

  constructor(
    private readonly connection: { readonly commits: number },
    private readonly openFile: () => Promise<SyncableFile>,
  ) {}

  /** Resolves when every commit made before the call is durable. */
  durable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure)
    const target = this.connection.commits
    if (target <= this.covered) return Promise.resolve()
    if (!this.inFlight) return this.start()
    if (this.inFlight.upTo >= target) return this.inFlight.done
    // The fsync under way began before this commit: wait for the next one, shared by all who come
    // in the meantime.
    this.queued ??= this.inFlight.done.then(
      () => {
        this.queued = undefined
        return this.inFlight ? this.inFlight.done : this.start()
      },
      (err) => {
        this.queued = undefined
        throw err
      },
    )
    return this.queued.then(() => this.durable())
  }

  async close(): Promise<void> {
    await this.durable().catch(() => {})
    await this.file?.close()
    this.file = undefined
  }

  private start(): Promise<void> {
    const upTo = this.connection.commits
    const done = this.sync().then(
      () => {
        this.covered = Math.max(this.covered, upTo)
        this.inFlight = undefined
      },
      (err: Error) => {
        this.failure = new Error(`fsync of the SQLite WAL failed; restart the service: ${err.message}`, {
          cause: err,
        })
        this.inFlight = undefined
        throw this.failure
      },
    )
    this.inFlight = { upTo, done }
    return done
  }

  private async sync(): Promise<void> {
    this.file ??= await this.openFile()
    await this.file.datasync()
    this.syncs++
  }
}
