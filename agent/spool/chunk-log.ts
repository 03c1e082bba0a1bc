import { opendirSync, rmSync, statSync } from 'node:fs'
import { mkdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Low } from 'lowdb'
import type { Logger } from 'pino'
import { forEachBounded } from './bounded.js'
import { ChunkIndex, type IndexedChunk } from './chunk-index.js'
import { salvageItems } from './chunk-salvage.js'
import { CorruptFileError, DurableJsonFile, syncDirectory } from './durable-json-file.js'
import { unlinkIfPresent } from './small-files.js'

/** One chunk file: its place in the log, its items, its size, and when it was written. */
export interface ChunkRef extends IndexedChunk {
  file: string
}

interface ChunkData<T> {
  kind: string
  version: 1
  seq: number
  items: T[]
}

interface Pending<T> {
  items: T[]
  resolve: () => void
  reject: (err: unknown) => void
}

interface ChunkLogOptions<T> {
  dir: string
  /** Names the files (`<kind>-<seq>-<count>.json`) and is checked on read. */
  kind: string
  maxItemsPerChunk: number
  /** Whether a stored item still has the shape written; a chunk with one that does not is corrupt. */
  isItem: (value: unknown) => value is T
  /**
   * Whether an item found in a damaged chunk is whole and may be stored again (see read()); isItem
   * by default. It runs only on damaged chunks, so it may check what is too dear to check on every
   * read (a punch's id against its fields).
   */
  isIntact?: (value: unknown) => value is T
  /** The longest an item's JSON can be: salvage looks no further for the end of one (chunk-salvage.ts). */
  maxItemChars?: number
  log: Logger
}

/** Most chunk files one group commit writes; more wait for the next. */
const MAX_CHUNKS_PER_COMMIT = 32
/**
 * Files removed at once when a batch of many small chunks is deleted: enough to keep libuv's four
 * threads busy, few enough that a batch never holds many requests in flight.
 */
const FILE_CONCURRENCY = 16

/**
 * An append-only log of bounded, immutable chunk files
 * (docs/development/architecture.md#the-agents-guarantees), written through lowdb with DurableJsonFile.
 * Appends that arrive while a commit is being written share the next one (group commit): their items go into
 * as few chunk files as fit, each fsynced, then the directory once, and every caller hears back only then.
 * Chunks are read one at a time and removed whole, so memory holds the index, never the backlog. A chunk that
 * cannot be read back has its intact items salvaged into new chunks, is moved to quarantine/ and reported;
 * the others carry on.
 */
export class ChunkLog<T> {
  private readonly chunks = new ChunkIndex()
  private queue: Pending<T>[] = []
  private flushing: Promise<void> | undefined
  private nextSeq = 1
  /** Damaged chunks being salvaged, by sequence number: a second reader waits for the first. */
  private readonly recovering = new Map<number, Promise<void>>()
  quarantined = 0
  /** Items of quarantined chunks stored again, and those that could not be read back. */
  salvaged = 0
  unrecoverable = 0

  constructor(private readonly options: ChunkLogOptions<T>) {}

  private get pattern(): RegExp {
    return new RegExp(`^${this.options.kind}-(\\d{16})-(\\d+)\\.json$`)
  }

  get quarantineDir(): string {
    return join(this.options.dir, 'quarantine')
  }

  /**
   * Reads the directory: leftovers of interrupted writes go, every chunk is indexed (not read).
   * The listing is streamed and the index holds numbers only, so a spool of a million files opens
   * without a million strings in memory. The calls are synchronous on purpose: the spool opens
   * before anything else of the agent starts (nothing waits on the event loop yet), and a
   * synchronous stat costs a fraction of an asynchronous one's CPU, which over a million files
   * is tens of seconds of startup.
   */
  async open(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true })
    const pattern = this.pattern
    // Counted first (a listing costs a tenth of the stats below), so the index is allocated once.
    this.chunks.reserve(this.countChunkFiles())
    const dir = opendirSync(this.options.dir, { bufferSize: 1024 })
    try {
      for (let entry = dir.readSync(); entry; entry = dir.readSync()) {
        const name = entry.name
        // A .tmp was never renamed into place, so no one was told it was stored.
        if (name.endsWith('.tmp')) {
          rmSync(join(this.options.dir, name), { force: true })
          continue
        }
        const m = pattern.exec(name)
        if (!m || Number(m[2]) === 0) continue
        const info = statSync(join(this.options.dir, name), { throwIfNoEntry: false })
        // Gone since it was listed (another process reading this spool removed it): not ours.
        if (!info) continue
        this.chunks.add({ seq: Number(m[1]), count: Number(m[2]), bytes: info.size, writtenAt: info.mtimeMs })
      }
    } finally {
      dir.closeSync()
    }
    this.chunks.sort()
    this.nextSeq = Math.max(this.nextSeq, this.chunks.lastSeq + 1)
  }

  private countChunkFiles(): number {
    const pattern = this.pattern
    let count = 0
    const dir = opendirSync(this.options.dir, { bufferSize: 1024 })
    try {
      for (let entry = dir.readSync(); entry; entry = dir.readSync()) if (pattern.test(entry.name)) count++
    } finally {
      dir.closeSync()
    }
    return count
  }

  /** Stores items durably, in order; resolves once they are on disk. */
  append(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ items: [...items], resolve, reject })
      if (!this.flushing)
        this.flushing = new Promise<void>((done) => setImmediate(() => this.flush().finally(done)))
    })
  }

  /**
   * Chunks after `seq` (all by default), oldest first, one at a time: each step looks up the next
   * chunk afresh, so chunks may be appended and removed while this is iterated.
   */
  *refs(afterSeq = 0): Generator<ChunkRef> {
    for (const chunk of this.chunks.from(afterSeq)) yield this.ref(chunk)
  }

  /**
   * Consecutive chunks after `afterSeq` holding at most `maxItems` items together (at least one
   * chunk, however big): what one request to the cloud can carry.
   */
  run(afterSeq: number, maxItems: number): ChunkRef[] {
    return this.chunks.run(afterSeq, maxItems).map((chunk) => this.ref(chunk))
  }

  /** The highest sequence number written so far (0 if none). */
  get lastSeq(): number {
    return this.nextSeq - 1
  }

  /** O(1): running totals, and the oldest chunk is the first in sequence order. */
  stats(): { chunks: number; items: number; bytes: number; oldestWrittenAt: number | undefined } {
    return {
      chunks: this.chunks.size,
      items: this.chunks.items,
      bytes: this.chunks.bytes,
      oldestWrittenAt: this.chunks.first()?.writtenAt,
    }
  }

  get items(): number {
    return this.chunks.items
  }

  get bytes(): number {
    return this.chunks.bytes
  }

  /**
   * A chunk's items. A chunk that cannot be read back whole is salvaged and quarantined (see
   * recover()), then a CorruptFileError is thrown: its file is kept for an operator, never deleted.
   */
  async read(ref: ChunkRef): Promise<T[]> {
    try {
      const db = new Low<ChunkData<T> | null>(new DurableJsonFile(ref.file, ref.bytes), null)
      await db.read()
      const data = db.data
      if (!data) throw new CorruptFileError(ref.file, 'missing')
      const wellFormed =
        data.kind === this.options.kind &&
        data.version === 1 &&
        data.seq === ref.seq &&
        Array.isArray(data.items) &&
        data.items.length === ref.count &&
        data.items.every(this.options.isItem)
      if (!wellFormed) throw new CorruptFileError(ref.file, 'not the chunk its name promises')
      return data.items
    } catch (err) {
      if (!(err instanceof CorruptFileError)) throw err
      let recovery = this.recovering.get(ref.seq)
      if (!recovery) {
        recovery = this.recover(ref, err).finally(() => this.recovering.delete(ref.seq))
        this.recovering.set(ref.seq, recovery)
      }
      await recovery
      throw err
    }
  }

  /**
   * A damaged chunk must not take the punches that can still be read with it
   * (docs/development/architecture.md#the-agents-guarantees). Every intact
   * item in the file (isIntact) is appended again, durably, as new chunks at the end of the log,
   * and only then is the file moved to quarantine/: a crash in between finds the file again and
   * salvages it twice, whose copies the cloud dedupes by punch id. If the append fails (a full
   * disk), the error goes to the caller and the chunk stays as it is, to be tried again.
   */
  private async recover(ref: ChunkRef, err: CorruptFileError): Promise<void> {
    // Quarantined by an earlier read, or removed since: nothing of it is ours to salvage.
    if (!this.chunks.has(ref.seq, ref.count)) return
    let text = ''
    try {
      text = await readFile(ref.file, 'utf8')
    } catch (readError) {
      if ((readError as NodeJS.ErrnoException).code !== 'ENOENT') throw readError
    }
    const { items, cutShort } = salvageItems(text, {
      isItem: this.options.isIntact ?? this.options.isItem,
      maxItemChars: this.options.maxItemChars,
    })
    await this.append(items)
    const unrecoverable = Math.max(0, ref.count - items.length)
    this.salvaged += items.length
    this.unrecoverable += unrecoverable
    await this.quarantine(ref, err, { salvaged: items.length, unrecoverable, cutShort })
  }

  /**
   * Deletes whole chunks, durably: all of them unlinked (a few at a time), then the directory
   * fsynced once for the lot. A chunk no longer indexed (removed already, or quarantined) is left
   * alone, so a quarantined file is never deleted by mistake. A crash part-way leaves some of the
   * chunks, whose items are then sent again: the cloud dedupes them.
   */
  async remove(refs: readonly ChunkRef[]): Promise<void> {
    const mine = refs.filter((ref) => this.chunks.has(ref.seq, ref.count))
    if (mine.length === 0) return
    try {
      await forEachBounded(mine, FILE_CONCURRENCY, async (ref) => {
        await unlinkIfPresent(ref.file)
        this.chunks.remove(ref.seq, ref.count)
      })
    } finally {
      await syncDirectory(this.options.dir)
    }
  }

  /** Waits for appends already made to be on disk. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing
  }

  private fileOf(chunk: { seq: number; count: number }): string {
    return join(
      this.options.dir,
      `${this.options.kind}-${String(chunk.seq).padStart(16, '0')}-${chunk.count}.json`,
    )
  }

  /** File names are made on demand, for the few chunks in hand, and never kept in the index. */
  private ref(chunk: IndexedChunk): ChunkRef {
    return { ...chunk, file: this.fileOf(chunk) }
  }

  private async quarantine(
    ref: ChunkRef,
    err: CorruptFileError,
    salvage: { salvaged: number; unrecoverable: number; cutShort: boolean },
  ): Promise<void> {
    this.quarantined++
    this.chunks.remove(ref.seq, ref.count)
    await mkdir(this.quarantineDir, { recursive: true })
    const kept = join(this.quarantineDir, `${ref.seq}-${Date.now()}.json`)
    await rename(ref.file, kept).catch(() => {})
    this.options.log.error(
      { err, file: ref.file, quarantinedAs: kept, items: ref.count, ...salvage },
      'corrupt chunk quarantined, its intact items salvaged into the spool; the rest carries on',
    )
  }

  private async flush(): Promise<void> {
    const max = this.options.maxItemsPerChunk * MAX_CHUNKS_PER_COMMIT
    const batch: Pending<T>[] = []
    let size = 0
    while (
      this.queue.length > 0 &&
      (size === 0 || size + (this.queue[0] as Pending<T>).items.length <= max)
    ) {
      const next = this.queue.shift() as Pending<T>
      batch.push(next)
      size += next.items.length
    }
    const items = batch.flatMap((p) => p.items)
    const written: ChunkRef[] = []
    try {
      // The chunks of one commit are written side by side: each is whole or absent on its own, and
      // none counts until the directory is synced below, so their fsyncs need not queue one behind
      // the other (a commit of many terminals' uploads holds several chunks).
      const writes: Promise<void>[] = []
      for (let i = 0; i < items.length; i += this.options.maxItemsPerChunk) {
        const slice = items.slice(i, i + this.options.maxItemsPerChunk)
        const seq = this.nextSeq++
        const file = this.fileOf({ seq, count: slice.length })
        const data: ChunkData<T> = { kind: this.options.kind, version: 1, seq, items: slice }
        const adapter = new DurableJsonFile<ChunkData<T>>(file)
        writes.push(
          new Low(adapter, data).write().then(() => {
            written.push({
              seq,
              file,
              count: slice.length,
              bytes: adapter.writtenBytes,
              writtenAt: Date.now(),
            })
          }),
        )
      }
      const outcomes = await Promise.allSettled(writes)
      const failed = outcomes.find((o) => o.status === 'rejected')
      if (failed) throw (failed as PromiseRejectedResult).reason
      // In sequence order, as the index expects them.
      written.sort((a, b) => a.seq - b.seq)
      await syncDirectory(this.options.dir)
      for (const ref of written) this.chunks.add(ref)
      for (const pending of batch) pending.resolve()
    } catch (err) {
      // Chunks renamed into place before the failure may survive; their items are then sent twice,
      // which the cloud dedupes. No caller is told its items are stored.
      for (const ref of written) await rm(ref.file, { force: true }).catch(() => {})
      for (const pending of batch) pending.reject(err)
    } finally {
      if (this.queue.length > 0) {
        this.flushing = new Promise<void>((done) => setImmediate(() => this.flush().finally(done)))
      } else this.flushing = undefined
    }
  }
}
