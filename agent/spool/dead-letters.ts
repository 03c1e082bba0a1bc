import type { Logger } from 'pino'
import { newId } from '../../shared/ids.js'
import { formatServerTime, nowMicros } from '../../shared/time.js'
import type { DeadLetter, SpooledPunch } from '../punch/spooled-punch.js'
import { ChunkLog } from './chunk-log.js'
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
 * What could not be forwarded: punches the cloud rejected, punches from a device with a wrong
 * clock, frames that could not be read (DESIGN.md §5: nothing is dropped). Kept durably in their
 * own chunk files next to the spool, to be listed, exported, and replayed once the cause is fixed.
 */
export class DeadLetters {
  private readonly chunks: ChunkLog<DeadLetter>

  constructor(options: { dir: string; log: Logger }) {
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
    const at = formatServerTime(nowMicros())
    try {
      await this.chunks.append(entries.map((entry) => ({ id: newId('deadLetter'), at, ...entry })))
    } catch (err) {
      // A full disk refuses dead letters as it refuses punches: the source keeps the frame.
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new SpoolFullError('disk')
      throw err
    }
  }

  count(): number {
    return this.chunks.stats().items
  }

  /** Every entry, oldest first. Dead letters are few; a corrupt file is quarantined and skipped. */
  async list(): Promise<DeadLetter[]> {
    const all: DeadLetter[] = []
    for (const ref of this.chunks.refs()) {
      try {
        all.push(...(await this.chunks.read(ref)))
      } catch {
        // Quarantined and logged by the chunk log; the others are still listed.
      }
    }
    return all
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
    for (const ref of this.chunks.refs()) {
      let entries: DeadLetter[]
      try {
        entries = await this.chunks.read(ref)
      } catch {
        continue
      }
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
