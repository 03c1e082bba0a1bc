import { mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Low } from 'lowdb'
import type { Logger } from 'pino'
import { CorruptFileError, DurableJsonFile, syncDirectory } from './durable-json-file.js'

/** One chunk file: its place in the log, its items, its size, and when it was written. */
export interface ChunkRef {
  seq: number
  file: string
  count: number
  bytes: number
  writtenAt: number
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

export interface ChunkLogOptions<T> {
  dir: string
  /** Names the files (`<kind>-<seq>-<count>.json`) and is checked on read. */
  kind: string
  maxItemsPerChunk: number
  /** Whether a stored item still has the shape written; a chunk with one that does not is corrupt. */
  isItem: (value: unknown) => value is T
  log: Logger
}

/** Most chunk files one group commit writes; more wait for the next. */
const MAX_CHUNKS_PER_COMMIT = 32

/**
 * An append-only log of bounded, immutable chunk files (DESIGN.md §5), written through lowdb with
 * DurableJsonFile. Appends that arrive while a commit is being written share the next one (group
 * commit): their items go into as few chunk files as fit, each fsynced, then the directory once,
 * and every caller hears back only then. Chunks are read one at a time and removed whole, so memory
 * holds the index, never the backlog. A chunk that cannot be read back is moved to quarantine/ and
 * reported; the others carry on.
 */
export class ChunkLog<T> {
  private readonly chunks = new Map<number, ChunkRef>()
  private queue: Pending<T>[] = []
  private flushing: Promise<void> | undefined
  private nextSeq = 1
  private totalBytes = 0
  private totalItems = 0
  quarantined = 0

  constructor(private readonly options: ChunkLogOptions<T>) {}

  private get pattern(): RegExp {
    return new RegExp(`^${this.options.kind}-(\\d{16})-(\\d+)\\.json$`)
  }

  get quarantineDir(): string {
    return join(this.options.dir, 'quarantine')
  }

  /** Reads the directory: leftovers of interrupted writes go, every chunk is indexed (not read). */
  async open(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true })
    for (const name of await readdir(this.options.dir)) {
      const path = join(this.options.dir, name)
      // A .tmp was never renamed into place, so no one was told it was stored.
      if (name.endsWith('.tmp')) {
        await rm(path, { force: true })
        continue
      }
      const m = this.pattern.exec(name)
      if (!m) continue
      const info = await stat(path)
      const ref: ChunkRef = {
        seq: Number(m[1]),
        file: path,
        count: Number(m[2]),
        bytes: info.size,
        writtenAt: info.mtimeMs,
      }
      this.index(ref)
      this.nextSeq = Math.max(this.nextSeq, ref.seq + 1)
    }
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

  /** Chunks oldest first. */
  refs(): ChunkRef[] {
    return [...this.chunks.values()].sort((a, b) => a.seq - b.seq)
  }

  stats(): { chunks: number; items: number; bytes: number; oldestWrittenAt: number | undefined } {
    let oldest: number | undefined
    for (const ref of this.chunks.values())
      if (oldest === undefined || ref.writtenAt < oldest) oldest = ref.writtenAt
    return {
      chunks: this.chunks.size,
      items: this.totalItems,
      bytes: this.totalBytes,
      oldestWrittenAt: oldest,
    }
  }

  /**
   * A chunk's items. A chunk that cannot be read back whole is quarantined and dropped from the
   * index (a CorruptFileError is thrown): its file is kept for an operator, never deleted.
   */
  async read(ref: ChunkRef): Promise<T[]> {
    try {
      const db = new Low<ChunkData<T> | null>(new DurableJsonFile(ref.file), null)
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
      await this.quarantine(ref, err)
      throw err
    }
  }

  /** Deletes whole chunks, durably. */
  async remove(refs: readonly ChunkRef[]): Promise<void> {
    for (const ref of refs) {
      await unlink(ref.file).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err
      })
      this.unindex(ref)
    }
    if (refs.length > 0) await syncDirectory(this.options.dir)
  }

  /** Waits for appends already made to be on disk. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing
  }

  private index(ref: ChunkRef): void {
    this.chunks.set(ref.seq, ref)
    this.totalBytes += ref.bytes
    this.totalItems += ref.count
  }

  private unindex(ref: ChunkRef): void {
    if (!this.chunks.delete(ref.seq)) return
    this.totalBytes -= ref.bytes
    this.totalItems -= ref.count
  }

  private async quarantine(ref: ChunkRef, err: CorruptFileError): Promise<void> {
    this.quarantined++
    this.unindex(ref)
    await mkdir(this.quarantineDir, { recursive: true })
    await rename(ref.file, join(this.quarantineDir, `${ref.seq}-${Date.now()}.json`)).catch(() => {})
    this.options.log.error(
      { err, file: ref.file, items: ref.count },
      'corrupt chunk quarantined; the rest carries on',
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
      for (let i = 0; i < items.length; i += this.options.maxItemsPerChunk) {
        const slice = items.slice(i, i + this.options.maxItemsPerChunk)
        const seq = this.nextSeq++
        const file = join(
          this.options.dir,
          `${this.options.kind}-${String(seq).padStart(16, '0')}-${slice.length}.json`,
        )
        const data: ChunkData<T> = { kind: this.options.kind, version: 1, seq, items: slice }
        const adapter = new DurableJsonFile<ChunkData<T>>(file)
        await new Low(adapter, data).write()
        written.push({ seq, file, count: slice.length, bytes: adapter.writtenBytes, writtenAt: Date.now() })
      }
      await syncDirectory(this.options.dir)
      for (const ref of written) this.index(ref)
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
