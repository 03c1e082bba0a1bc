import PQueue from 'p-queue'
import type { Logger } from 'pino'
import type { EventBus } from '../events.js'
import type { SpooledPunch } from '../punch/spooled-punch.js'
import { mapBounded } from '../spool/bounded.js'
import type { ChunkRef } from '../spool/chunk-log.js'
import type { DeadLetters } from '../spool/dead-letters.js'
import { CorruptFileError } from '../spool/durable-json-file.js'
import type { Spool } from '../spool/spool.js'
import { type BackoffOptions, DEFAULT_BACKOFF, retryDelay, sleep } from './backoff.js'
import { HealthProbe } from './health-probe.js'
import type { PunchOutcome, PunchUplink } from './punch-uplink.js'
import { RetryableError } from './retryable-error.js'
import { settledOrAborted } from './settled-or-aborted.js'

interface ForwarderOptions {
  spool: Pick<Spool, 'nextRun' | 'read' | 'remove' | 'waitForPunches'>
  deadLetters: Pick<DeadLetters, 'add'>
  /** With `answers`, a wait after the cloud did not answer is cut short once it answers again. */
  uplink: Pick<PunchUplink, 'send'> & Partial<Pick<PunchUplink, 'answers'>>
  events: EventBus
  log: Logger
  /** Requests to the cloud in flight at once. */
  concurrency: number
  /** Punches per batch request. */
  batchSize: number
  backoff?: BackoffOptions
  /** Mean pause between health probes while backing off (DEFAULT_PROBE_INTERVAL_MS); 0: no probe. */
  probeIntervalMs?: number
  random?: () => number
}

/** Every second or two, with jitter (docs/decisions/0088-agent-probes-the-cloud-while-backing-off.md). */
export const DEFAULT_PROBE_INTERVAL_MS = 1_500

/** Stopping: the work in hand is left as it is (its chunks stay in the spool and are sent again). */
class Stopped extends Error {}

/** Chunk files read at once for one batch (1-punch chunks: up to batchSize files per request). */
const READS_PER_BATCH = 8

/**
 * Spool to cloud (docs/development/architecture.md#data-flow-in-the-agent). The spool is walked oldest first,
 * from just after the last chunk taken: consecutive chunks are gathered into one batch of up to `batchSize`
 * punches, so a backlog of tiny chunks (an outage at human pace leaves one punch per group commit) still goes
 * in full batch requests. Only a few batches are in hand at once (see run()), so memory stays flat
 * whatever the backlog; while `concurrency` of them are being sent (p-queue), the others are read
 * from disk or have their chunks deleted, so the disk's latency is not added to the cloud's (with
 * one-punch chunks it is as long as a request). A batch's chunks are deleted together (one
 * directory fsync) only once every punch in them is accepted by the cloud or durably in dead
 * letters; a crash before that sends them again, which the cloud dedupes by punch id. Anything
 * else (the network, 429, 5xx, our own disk) is retried with backoff and jitter, honouring
 * Retry-After, forever and never in a tight loop.
 */
export class Forwarder {
  /** Requests to the cloud in flight: `concurrency` at most. */
  private readonly sending: PQueue
  /** Batches taken from the spool and not done with: being read, sent, or their chunks deleted. */
  private readonly batches = new Set<Promise<void>>()
  /** The punches of those batches. */
  private punchesInHand = 0
  private readonly abort = new AbortController()
  private loop: Promise<void> | undefined
  private readonly backoff: BackoffOptions
  /** Asks the cloud whether it answers again while a request backs off; undefined: no probing. */
  private readonly probe: HealthProbe | undefined
  /** The last chunk taken: chunks only ever get higher numbers, so everything after it is new. */
  private cursor = 0
  /** Resolves once the batch taken last has queued its request: the next one queues after it. */
  private sendTurn: Promise<void> = Promise.resolve()

  constructor(private readonly options: ForwarderOptions) {
    this.sending = new PQueue({ concurrency: options.concurrency })
    this.backoff = options.backoff ?? DEFAULT_BACKOFF
    const answers = options.uplink.answers?.bind(options.uplink)
    const intervalMs = options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS
    this.probe =
      answers && intervalMs > 0
        ? new HealthProbe({
            check: answers,
            intervalMs,
            log: options.log,
            ...(options.random ? { random: options.random } : {}),
          })
        : undefined
  }

  /** Batches taken and not finished: sending, or being read or deleted. */
  get inHand(): number {
    return this.batches.size
  }

  start(): void {
    this.loop ??= this.run()
  }

  /** Ends the work in hand at its next step (each batch's chunks stay in the spool if not done). */
  async stop(): Promise<void> {
    this.abort.abort()
    await this.loop
    await Promise.allSettled([...this.batches])
  }

  private async run(): Promise<void> {
    const { spool, concurrency, batchSize } = this.options
    while (!this.abort.signal.aborted) {
      // The rest of the backlog stays on disk and in the index, not in memory: `concurrency`
      // batches in hand, so that as many requests can be in flight, and as many more read ahead
      // while they hold fewer punches than twice `concurrency` full batches. So chunks bigger than
      // a batch (a large spool.chunkPunches) are hardly read ahead, and the heap holds about
      // `concurrency` chunks or batches, whichever is bigger, twice over at most: what the
      // unit's --max-old-space-size is sized for (deploy/hajri-agent.service).
      const readAhead =
        this.batches.size < 2 * concurrency && this.punchesInHand < 2 * concurrency * batchSize
      if (this.batches.size >= concurrency && !readAhead) {
        await settledOrAborted(Promise.race([...this.batches]), this.abort.signal)
        continue
      }
      const batch = spool.nextRun(this.cursor, batchSize)
      const last = batch.at(-1)
      if (!last) {
        // Nothing new: sleep until punches arrive, or a second passes.
        await settledOrAborted(spool.waitForPunches(1000), this.abort.signal)
        continue
      }
      this.cursor = last.seq
      const punches = batch.reduce((sum, ref) => sum + ref.count, 0)
      this.punchesInHand += punches
      const turn = this.sendTurn
      let yieldTurn = () => {}
      this.sendTurn = new Promise<void>((resolve) => {
        yieldTurn = resolve
      })
      // The cursor has moved past this batch, so it must not be given up on: a failure its own
      // steps do not retry (a defect of ours) sends it all again, after a backoff, rather than
      // leaving its chunks in the spool until the next restart.
      const done: Promise<void> = this.untilDone('forwarding a batch', () =>
        this.forwardBatch(batch, turn, yieldTurn),
      )
        .catch((err) => {
          if (!(err instanceof Stopped))
            this.options.log.error({ err, chunks: batch.length }, 'forwarding a batch failed')
        })
        .finally(() => {
          yieldTurn()
          this.batches.delete(done)
          this.punchesInHand -= punches
        })
      this.batches.add(done)
    }
  }

  /**
   * Reads, sends and deletes one batch. `turn` resolves when the batch before it has queued its
   * request; `yieldTurn` lets the batch after it queue: batches are read side by side, and one
   * read sooner must not overtake an older one, so the cloud gets the spool oldest first.
   */
  private async forwardBatch(
    refs: readonly ChunkRef[],
    turn: Promise<void>,
    yieldTurn: () => void,
  ): Promise<void> {
    const { spool, batchSize } = this.options
    // Read a few files at a time; a corrupt chunk is quarantined and reported by the spool, and
    // left out of the batch and of the removal (its file is kept for an operator).
    const read = await this.untilDone('reading spooled chunks', () =>
      mapBounded(refs, READS_PER_BATCH, async (ref) => {
        try {
          return { ref, punches: await spool.read(ref) }
        } catch (err) {
          if (err instanceof CorruptFileError) return undefined
          throw err
        }
      }),
    )
    const good = read.filter((r) => r !== undefined)
    const punches = good.flatMap((r) => r.punches)
    await turn
    // One request for the lot, unless a single chunk holds more than a batch.
    for (let i = 0; i < punches.length; i += batchSize) {
      const slice = punches.slice(i, i + batchSize)
      const request = this.sending.add(() => this.sendWithRetry(slice))
      yieldTurn()
      const outcomes = await request
      const rejected = outcomes.filter((o): o is Extract<PunchOutcome, { accepted: false }> => !o.accepted)
      if (rejected.length > 0) {
        await this.untilDone('storing rejected punches in dead letters', () => this.deadLetter(rejected))
      }
      this.options.events.emit('punchesForwarded', { count: outcomes.length - rejected.length })
    }
    yieldTurn() // (no request at all: every chunk of the batch was corrupt)
    const done = good.map((r) => r.ref)
    await this.untilDone('removing forwarded chunks', () => spool.remove(done))
  }

  private async deadLetter(rejected: Extract<PunchOutcome, { accepted: false }>[]): Promise<void> {
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

  /**
   * A step on our own side (the disk: reading the spool, writing dead letters, removing chunks)
   * that failed is tried again with backoff, keeping the batch and what it has done so far: a
   * full disk must not turn into a tight loop, and a punch already dead-lettered must not be
   * dead-lettered twice.
   */
  private async untilDone<R>(what: string, step: () => Promise<R>): Promise<R> {
    for (let attempt = 0; ; attempt++) {
      if (this.abort.signal.aborted) throw new Stopped()
      try {
        return await step()
      } catch (err) {
        if (err instanceof Stopped) throw err
        const delay = retryDelay(attempt, this.backoff, undefined, this.options.random)
        this.options.log.error({ err, attempt, retryInMs: delay }, `${what} failed; will retry`)
        await sleep(delay, this.abort.signal)
      }
    }
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
        const outage = err instanceof RetryableError && err.kind !== 'other'
        await this.backOff(delay, outage)
      }
    }
  }

  /**
   * Waits `ms`, or less once the health probe sees the cloud answer again after an outage: a wait
   * forced by the cloud not answering or failing with a 5xx (`outage`) is only there to spare it
   * while it is down. Otherwise (a 429, a Retry-After, a token refused, a defect of ours) the
   * whole wait, as the cloud asked. The batch is simply sent again; its chunks are untouched here.
   */
  private async backOff(ms: number, outage: boolean): Promise<void> {
    if (!this.probe || !outage || this.abort.signal.aborted) return sleep(ms, this.abort.signal)
    const wait = new AbortController()
    const onStop = () => wait.abort()
    this.abort.signal.addEventListener('abort', onStop, { once: true })
    try {
      await Promise.race([sleep(ms, wait.signal), this.probe.untilBack(wait.signal)])
    } finally {
      wait.abort()
      this.abort.signal.removeEventListener('abort', onStop)
    }
  }
}
