import type { Logger } from 'pino'
import { newId } from '../../shared/ids.js'
import { formatServerTime, nowMicros } from '../../shared/time.js'
import type { DeadLetter, SpooledPunch } from '../punch/spooled-punch.js'
import { ChunkLog, type ChunkRef } from './chunk-log.js'
import { CorruptFileError } from './durable-json-file.js'
import { SpoolFullError } from './spool.js'

function isDeadLetter(value: unknown): value is DeadLetter {
  const d = value as Record<string, unknown>
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.id === 'string' &&
    typeof d.at === 'string' &&
    typeof d.deviceId === 'string' &&
    typeof d.reason === 'string' &&
    typeof d.detail === 'string'
  )
}

export type NewDeadLetter = Omit<DeadLetter, 'id' | 'at'>

/**
 * Entries a page of `list` holds by default, and at most, as the cloud's lists
 * (docs/development/architecture.md#paging).
 */
const DEAD_LETTER_PAGE_DEFAULT = 50
export const DEAD_LETTER_PAGE_MAX = 200

interface DeadLetterPage {
  data: DeadLetter[]
  /** Where the next page starts; null after the last. */
  nextCursor: string | null
}

/** A cursor that this agent did not hand out. */
export class InvalidCursorError extends Error {
  readonly code = 'invalid_cursor'
  constructor() {
    super('the cursor is not one this agent gave out')
    this.name = 'InvalidCursorError'
  }
}

/** Opaque to clients: the chunk and the index in it where the next page starts. */
function encodeCursor(seq: number, index: number): string {
  return Buffer.from(`${seq}.${index}`).toString('base64url')
}

function decodeCursor(cursor: string): { seq: number; index: number } {
  const m = /^(\d{1,16})\.(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!m || Number(m[1]) < 1) throw new InvalidCursorError()
  return { seq: Number(m[1]), index: Number(m[2]) }
}

/**
 * What could not be forwarded: punches the cloud rejected, punches from a device with a wrong
 * clock, frames that could not be read (nothing is dropped: docs/decisions/0027-nothing-dropped.md). Kept
 * durably in their own chunk files next to the spool, to be listed, exported, and replayed once the cause is
 * fixed.
 */
export class DeadLetters {
  private readonly chunks: ChunkLog<DeadLetter>
  private readonly newId: () => string
  private readonly now: () => string

  constructor(options: {
    dir: string
    log: Logger
    /**
     * A new entry's id, and the time of an add (RFC 3339, UTC): a new `dlt_` id and now by default;
     * fixed ones where the files must come out the same every time
     * (test/fixtures/write-spool-fixture.ts).
     */
    newId?: () => string
    now?: () => string
  }) {
    this.newId = options.newId ?? (() => newId('deadLetter'))
    this.now = options.now ?? (() => formatServerTime(nowMicros()))
    this.chunks = new ChunkLog<DeadLetter>({
      dir: options.dir,
      kind: 'dead',
      maxItemsPerChunk: 1000,
      isItem: isDeadLetter,
      log: options.log,
    })
  }

  open(): Promise<void> {
    return this.chunks.open()
  }

  drain(): Promise<void> {
    return this.chunks.drain()
  }

  /** Parks entries durably; resolves once they are on disk. */
  async add(entries: readonly NewDeadLetter[]): Promise<void> {
    const at = this.now()
    try {
      await this.chunks.append(entries.map((entry) => ({ id: this.newId(), at, ...entry })))
    } catch (err) {
      // A full disk refuses dead letters as it refuses punches: the source keeps the frame.
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new SpoolFullError('disk')
      throw err
    }
  }

  count(): number {
    return this.chunks.stats().items
  }

  /** A chunk's entries, or undefined for a corrupt one: the chunk log has quarantined and logged it. */
  private async readOrSkip(ref: ChunkRef): Promise<DeadLetter[] | undefined> {
    try {
      return await this.chunks.read(ref)
    } catch (err) {
      if (err instanceof CorruptFileError) return undefined
      throw err
    }
  }

  /**
   * A page of entries, oldest first, from `cursor` (the start when absent) on: at most `limit`
   * (1..DEAD_LETTER_PAGE_MAX) of those `select` keeps, read one chunk file at a time, so listing a
   * large pile of dead letters never holds more than a page and a chunk in memory. The cursor names
   * a place in the chunk log, so a page is the same whether or not entries were added since; a
   * replay meanwhile moves the entries it keeps to the end, where a listing may meet them again.
   * A corrupt file is quarantined (and logged) by the chunk log and skipped.
   */
  async list(
    options: { limit?: number; cursor?: string; select?: (entry: DeadLetter) => boolean } = {},
  ): Promise<DeadLetterPage> {
    const limit = options.limit ?? DEAD_LETTER_PAGE_DEFAULT
    if (!Number.isInteger(limit) || limit < 1 || limit > DEAD_LETTER_PAGE_MAX)
      throw new RangeError(`limit must be 1 to ${DEAD_LETTER_PAGE_MAX}`)
    const start = options.cursor === undefined ? { seq: 1, index: 0 } : decodeCursor(options.cursor)
    const data: DeadLetter[] = []
    for (const ref of this.chunks.refs(start.seq - 1)) {
      const entries = await this.readOrSkip(ref)
      if (entries === undefined) continue
      for (let i = ref.seq === start.seq ? start.index : 0; i < entries.length; i++) {
        const entry = entries[i] as DeadLetter
        if (options.select && !options.select(entry)) continue
        data.push(entry)
        if (data.length === limit) {
          const atEnd = i === entries.length - 1 && this.chunks.refs(ref.seq).next().done
          return { data, nextCursor: atEnd ? null : encodeCursor(ref.seq, i + 1) }
        }
      }
    }
    return { data, nextCursor: null }
  }

  /**
   * Takes entries out for replay: those chosen by `select` (all by default) with a punch are handed
   * to `requeue`, which must store them durably (the spool), and only then removed from here, so a
   * crash in between replays twice rather than never. Entries without a punch stay.
   */
  async replay(
    requeue: (punches: SpooledPunch[]) => Promise<void>,
    select: (entry: DeadLetter) => boolean = () => true,
  ): Promise<{ replayed: number; kept: number }> {
    let replayed = 0
    let kept = 0
    // Entries kept are written again after the last chunk: this pass must not meet them.
    const last = this.chunks.lastSeq
    for (const ref of this.chunks.refs()) {
      if (ref.seq > last) break
      const entries = await this.readOrSkip(ref)
      if (entries === undefined) continue
      const chosen = entries.filter((e) => e.punch !== undefined && select(e))
      if (chosen.length === 0) {
        kept += entries.length
        continue
      }
      const rest = entries.filter((e) => !chosen.includes(e))
      await requeue(chosen.map((e) => e.punch as SpooledPunch))
      await this.chunks.append(rest)
      await this.chunks.remove([ref])
      replayed += chosen.length
      kept += rest.length
    }
    return { replayed, kept }
  }
}
