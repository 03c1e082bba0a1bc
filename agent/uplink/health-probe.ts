import type { Got } from 'got'
import type { Logger } from 'pino'
import { sleep } from './backoff.js'

/** How long one /healthz request may take: the probe only asks whether the cloud answers at all. */
export const PROBE_TIMEOUT_MS = 2_000

/**
 * GET /healthz (docs/decisions/0014-health-and-metrics.md): served without a token or a body, so
 * asking costs the cloud next to nothing. True only for a 200; a refusal, a 5xx from a proxy in
 * front of a stopped cloud, a timeout or a reset socket are all "not yet".
 */
export async function cloudAnswers(http: Got, signal: AbortSignal): Promise<boolean> {
  try {
    const response = await http.get('healthz', { signal, timeout: { request: PROBE_TIMEOUT_MS } })
    return response.statusCode === 200
  } catch {
    return false
  }
}

interface Waiter {
  /** The probe has seen the cloud not answer since this wait began. */
  seenDown: boolean
  done(): void
}

/**
 * While the forwarder backs off after the cloud did not answer, asks it cheaply and often whether
 * it answers again, so forwarding resumes within a probe interval of its return instead of after
 * a backoff of up to minutes (docs/decisions/0088-agent-probes-the-cloud-while-backing-off.md).
 * One loop serves every waiting batch, so there is never more than one probe request at a time;
 * it runs only while someone waits, and each wait ends it when aborted (stop()).
 */
export class HealthProbe {
  private readonly waiters = new Set<Waiter>()
  private loop: Promise<void> | undefined
  private stopLoop = new AbortController()

  constructor(
    private readonly deps: {
      check: (signal: AbortSignal) => Promise<boolean>
      /** Mean pause between probes; each pause is drawn from 0.5x to 1.5x of it. */
      intervalMs: number
      log: Logger
      random?: () => number
    },
  ) {}

  /**
   * Resolves once the probe sees the cloud answer after having seen it not answer, or when
   * `signal` aborts. Seeing it fail first matters: a cloud that serves /healthz while its punch
   * endpoint fails or times out (its database down, overloaded) must not be hit at the probe's
   * pace, so then the backoff runs its course.
   */
  untilBack(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve()
      const waiter: Waiter = {
        seenDown: false,
        done: () => {
          signal.removeEventListener('abort', waiter.done)
          this.waiters.delete(waiter)
          if (this.waiters.size === 0) this.stopLoop.abort()
          resolve()
        },
      }
      signal.addEventListener('abort', waiter.done, { once: true })
      this.waiters.add(waiter)
      this.loop ??= this.run()
    })
  }

  /** A probe loop is running (a wait is in progress). */
  get probing(): boolean {
    return this.loop !== undefined
  }

  private async run(): Promise<void> {
    const stop = new AbortController()
    this.stopLoop = stop
    const random = this.deps.random ?? Math.random
    try {
      while (!stop.signal.aborted) {
        // The first probe waits too: the failure that started the wait has only just happened.
        await sleep(this.deps.intervalMs * (0.5 + random()), stop.signal)
        if (stop.signal.aborted) break
        const up = await this.deps.check(stop.signal)
        if (stop.signal.aborted) break
        if (!up) this.deps.log.debug('health probe: the cloud does not answer yet')
        for (const waiter of [...this.waiters]) {
          if (!up) waiter.seenDown = true
          else if (waiter.seenDown) {
            this.deps.log.info('the cloud answers again; resuming forwarding before the backoff ends')
            waiter.done()
          }
        }
      }
    } finally {
      this.loop = undefined
      // A wait that began while this loop was stopping needs a loop of its own.
      if (this.waiters.size > 0) this.loop = this.run()
    }
  }
}
