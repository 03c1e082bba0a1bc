import type { Logger } from 'pino'
import { parseTimestamp } from '../../shared/time.js'
import { agentVersion } from '../agent-version.js'
import type { EventBus } from '../events.js'
import { punchId } from '../punch/punch-id.js'
import type { SpooledPunch } from '../punch/spooled-punch.js'
import { ChunkLog, type ChunkRef } from './chunk-log.js'
import { openSpoolFormat } from './spool-format.js'

/** The spool will not take more: it holds maxBytes, or the disk is full. */
export class SpoolFullError extends Error {
  constructor(readonly reason: 'cap' | 'disk') {
    super(reason === 'cap' ? 'the spool is full (spool.maxBytes)' : 'the disk is full')
    this.name = 'SpoolFullError'
  }
}

function isPunch(value: unknown): value is SpooledPunch {
  const p = value as Record<string, unknown>
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.id === 'string' &&
    typeof p.deviceId === 'string' &&
    typeof p.employeeCode === 'string' &&
    (p.punchType === 'IN' || p.punchType === 'OUT') &&
    typeof p.punchedAt === 'string' &&
    typeof p.receivedAt === 'string'
  )
}

/**
 * A punch found in a damaged chunk is stored again only if it is whole: its shape, and its id still
 * the hash of its fields (docs/decisions/0025-punch-id.md), so a record altered by the damage (a flipped
 * character in an employee code or a time) is not forwarded as a punch nobody made. It stays in the
 * quarantined file for an operator.
 */
function isIntactPunch(value: unknown): value is SpooledPunch {
  if (!isPunch(value)) return false
  const at = parseTimestamp(value.punchedAt)
  return at !== undefined && punchId(value.deviceId, value.employeeCode, at, value.punchType) === value.id
}

interface SpoolOptions {
  dir: string
  maxBytes: number
  chunkPunches: number
  log: Logger
  events: EventBus
  /** This agent's version, recorded in the spool's format marker; agentVersion() by default. */
  version?: string
}

/**
 * The durable spool of punches waiting for the cloud
 * (docs/development/architecture.md#the-agents-guarantees). A punch is acknowledged to its source only after
 * `append` resolves, that is after an fsync. When the spool holds maxBytes, or the disk is full, new punches
 * are refused (their source keeps them: an MQTT device gets no PUBACK) and an alarm is raised; older punches
 * are never deleted to make room.
 */
export class Spool {
  private readonly chunks: ChunkLog<SpooledPunch>
  /** Set while refusing; cleared when a removal makes room. */
  full: SpoolFullError | undefined
  private readonly waiters = new Set<() => void>()
  /** The most punches waiting at once since the spool was last empty: where a drain started. */
  private backlogPeak = 0

  constructor(private readonly options: SpoolOptions) {
    this.chunks = new ChunkLog<SpooledPunch>({
      dir: options.dir,
      kind: 'chunk',
      maxItemsPerChunk: options.chunkPunches,
      isItem: isPunch,
      isIntact: isIntactPunch,
      // A punch is a few hundred characters (ids, codes and times of bounded length).
      maxItemChars: 4096,
      log: options.log,
    })
  }

  /**
   * Opens the spool. Its format comes first (spool-format.ts): a spool written by a newer agent is
   * refused with a SpoolFormatError before anything in the directory is touched (the chunk log's
   * open removes leftovers), and an older one is migrated before it is read.
   */
  async start(): Promise<void> {
    await openSpoolFormat(this.options.dir, {
      version: this.options.version ?? agentVersion(),
      log: this.options.log,
    })
    await this.chunks.open()
    this.backlogPeak = this.chunks.items
  }

  async stop(): Promise<void> {
    await this.chunks.drain()
    for (const wake of this.waiters) wake()
  }

  async append(punches: readonly SpooledPunch[]): Promise<void> {
    if (punches.length === 0) return
    // Asked per punch, so answered from running totals (O(1)), never by walking the chunks.
    if (this.chunks.bytes >= this.options.maxBytes) this.refuse(new SpoolFullError('cap'))
    try {
      await this.chunks.append(punches)
      this.backlogPeak = Math.max(this.backlogPeak, this.chunks.items)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOSPC') this.refuse(new SpoolFullError('disk'))
      throw err
    }
    for (const wake of this.waiters) wake()
  }

  /** Chunks waiting for the cloud, oldest first, looked up one at a time (see ChunkLog.refs). */
  pending(): Generator<ChunkRef> {
    return this.chunks.refs()
  }

  /**
   * The next chunks to send after the chunk `afterSeq` (0: from the oldest): consecutive ones
   * holding at most `maxPunches` together, or one bigger chunk alone; none if there are none.
   */
  nextRun(afterSeq: number, maxPunches: number): ChunkRef[] {
    return this.chunks.run(afterSeq, maxPunches)
  }

  read(ref: ChunkRef): Promise<SpooledPunch[]> {
    return this.chunks.read(ref)
  }

  /** Deletes chunks the cloud has accepted in full (or whose rejects are in dead letters). */
  async remove(refs: readonly ChunkRef[]): Promise<void> {
    await this.chunks.remove(refs)
    if (this.chunks.items === 0) this.backlogPeak = 0
    if (this.full && this.chunks.bytes < this.options.maxBytes) {
      this.options.log.info('spool has room again')
      this.full = undefined
      this.options.events.emit('spoolHasRoom', { bytes: this.chunks.bytes, maxBytes: this.options.maxBytes })
    }
  }

  stats() {
    return {
      ...this.chunks.stats(),
      maxBytes: this.options.maxBytes,
      quarantined: this.chunks.quarantined,
      salvaged: this.chunks.salvaged,
      unrecoverable: this.chunks.unrecoverable,
      backlogPeak: this.backlogPeak,
    }
  }

  /** Resolves at the next append (or stop), or after `ms`. */
  waitForPunches(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.waiters.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      timer.unref()
      this.waiters.add(wake)
    })
  }

  private refuse(error: SpoolFullError): never {
    if (!this.full) {
      this.options.log.error(
        { bytes: this.chunks.bytes, maxBytes: this.options.maxBytes },
        `refusing punches: ${error.message}`,
      )
    }
    this.full = error
    this.options.events.emit('spoolFull', {
      bytes: this.chunks.bytes,
      maxBytes: this.options.maxBytes,
    })
    throw error
  }
}
