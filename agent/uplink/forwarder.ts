import PQueue from 'p-queue'
import type { Logger } from 'pino'
import type { EventBus } from '../events.js'
import type { SpooledPunch } from '../punch/spooled-punch.js'
import type { ChunkRef } from '../spool/chunk-log.js'
import type { DeadLetters } from '../spool/dead-letters.js'
import { CorruptFileError } from '../spool/durable-json-file.js'
import type { Spool } from '../spool/spool.js'
import { type BackoffOptions, DEFAULT_BACKOFF, retryDelay, sleep } from './backoff.js'
import type { PunchOutcome, PunchUplink } from './punch-uplink.js'
import { RetryableError } from './retryable-error.js'

export interface ForwarderOptions {
  spool: Pick<Spool, 'pending' | 'read' | 'remove' | 'waitForPunches'>
  deadLetters: Pick<DeadLetters, 'add'>
  uplink: Pick<PunchUplink, 'send'>
  events: EventBus
  log: Logger
  /** Requests to the cloud in flight at once. */
  concurrency: number
  /** Punches per batch request. */
  batchSize: number
  backoff?: BackoffOptions
  random?: () => number
}

/** Stopping: the work in hand is left as it is (its chunk stays in the spool and is sent again). */
class Stopped extends Error {}

/**
 * Spool to cloud (DESIGN.md §5). Chunks go oldest first, a bounded number at a time (p-queue), each
 * read from disk only when its turn comes, so memory stays flat whatever the backlog. A chunk is
 * deleted only once every punch in it is accepted by the cloud or durably in dead letters; anything
 * else (the network, 429, 5xx) is retried with backoff and jitter, honouring Retry-After, forever
 * and never in a tight loop.
 */
export class Forwarder {
  private readonly queue: PQueue
  private readonly queued = new Set<number>()
  private readonly abort = new AbortController()
  private loop: Promise<void> | undefined
  private readonly backoff: BackoffOptions
  private readonly stopped: Promise<void>

  constructor(private readonly options: ForwarderOptions) {
    this.queue = new PQueue({ concurrency: options.concurrency })
    this.backoff = options.backoff ?? DEFAULT_BACKOFF
    this.stopped = new Promise((resolve) =>
      this.abort.signal.addEventListener('abort', () => resolve(), { once: true }),
    )
  }

  start(): void {
    this.loop ??= this.run()
  }

  async stop(): Promise<void> {
    this.abort.abort()
    this.queue.clear()
    await this.loop
    await this.queue.onIdle()
  }

  private async run(): Promise<void> {
    const { spool } = this.options
    while (!this.abort.signal.aborted) {
      for (const ref of spool.pending()) {
        if (this.queued.has(ref.seq)) continue
        this.queued.add(ref.seq)
        this.queue
          .add(() => this.forwardChunk(ref))
          .catch((err) => {
            if (!(err instanceof Stopped))
              this.options.log.error({ err, chunk: ref.seq }, 'forwarding a chunk failed')
          })
          .finally(() => this.queued.delete(ref.seq))
      }
      // Every pending chunk is in the queue (p-queue runs `concurrency` of them at a time); only new
      // chunks need this loop, so it sleeps until punches arrive, or a second passes.
      await Promise.race([spool.waitForPunches(1000), this.stopped])
    }
  }

  private async forwardChunk(ref: ChunkRef): Promise<void> {
    let punches: SpooledPunch[]
    try {
      punches = await this.options.spool.read(ref)
    } catch (err) {
      if (err instanceof CorruptFileError) return // quarantined and reported by the spool
      throw err
    }
    for (let i = 0; i < punches.length; i += this.options.batchSize) {
      const outcomes = await this.sendWithRetry(punches.slice(i, i + this.options.batchSize))
      const rejected = outcomes.filter((o): o is Extract<PunchOutcome, { accepted: false }> => !o.accepted)
      if (rejected.length > 0) {
        await this.options.deadLetters.add(
          rejected.map(({ punch, problem }) => ({
            deviceId: punch.deviceId,
            reason: 'rejected_by_cloud' as const,
            detail: String(problem.detail ?? problem.title ?? problem.code ?? 'rejected'),
            punch,
            problem,
          })),
        )
        this.options.log.warn(
          { count: rejected.length, code: rejected[0]?.problem.code },
          'punches rejected by the cloud, kept in dead letters',
        )
        this.options.events.emit('deadLettered', {
          deviceId: rejected[0]?.punch.deviceId ?? '',
          reason: 'rejected_by_cloud',
          count: rejected.length,
        })
      }
      this.options.events.emit('punchesForwarded', { count: outcomes.length - rejected.length })
    }
    await this.options.spool.remove([ref])
  }

  private async sendWithRetry(punches: SpooledPunch[]): Promise<PunchOutcome[]> {
    for (let attempt = 0; ; attempt++) {
      if (this.abort.signal.aborted) throw new Stopped()
      try {
        return await this.options.uplink.send(punches, this.abort.signal)
      } catch (err) {
        // Anything else is a bug of ours; retrying slowly is still better than stopping.
        const hint = err instanceof RetryableError ? err.hintMs : undefined
        const delay = retryDelay(attempt, this.backoff, hint, this.options.random)
        const error = (err as Error).message
        this.options.events.emit('forwardFailed', { error, retryInMs: delay })
        this.options.log.warn({ err, attempt, retryInMs: delay }, 'forwarding failed; will retry')
        await sleep(delay, this.abort.signal)
      }
    }
  }
}
