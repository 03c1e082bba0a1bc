import PQueue from 'p-queue'
import type { LogFn } from 'pino'
import type { SecretBox } from '../../db/secret-box.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import type { CloudMetrics } from '../../metrics/cloud-metrics.js'
import type { WebhookSettings } from '../../settings/webhook-settings.js'
import type { AuditService } from '../audit/service.js'
import type { AuditStore } from '../audit/store.js'
import { ADDRESS_NOT_ALLOWED } from './attempt-error.js'
import { AttemptRecorder } from './attempt-recorder.js'
import type { DeliveryRow, DeliveryStore, DueDelivery } from './delivery-store.js'
import { secretContext } from './endpoint-service.js'
import type { EndpointStore } from './endpoint-store.js'
import { fanOutEvents } from './fan-out.js'
import type { WebhookOutbox } from './outbox.js'
import type { OutboxStore } from './outbox-store.js'
import type { AttemptResult, WebhookSender } from './webhook-sender.js'

/** How often an idle dispatcher looks for due retries and events from other instances. */
const IDLE_POLL_MS = 250
/** Deliveries of one endpoint a slot takes at once (see dispatchDue). */
const RUN_LENGTH = 10
const FAN_OUT_BATCH = 500

/** The stores the dispatcher, its fan-out and its attempt recorder use. */
export interface DispatcherStores {
  deliveries: DeliveryStore
  endpoints: EndpointStore
  audit: AuditStore
  outbox: OutboxStore
}

export interface DispatcherOptions {
  stores: UnitOfWork<DispatcherStores>
  /** PostgreSQL: claims lock rows (FOR UPDATE SKIP LOCKED) so instances share the work safely. */
  dialect: 'sqlite' | 'postgres'
  secretBox: () => SecretBox
  outbox: WebhookOutbox
  audit: AuditService
  sender: Pick<WebhookSender, 'send'>
  /**
   * Resolves once every commit so far is on disk (SQLite's WAL fsync, DatabaseHandle.durable): no
   * event is sent whose change a power cut could still undo.
   */
  durable?: () => Promise<void>
  settings: WebhookSettings
  log: { error: LogFn; warn: LogFn; debug: LogFn }
  /** Told the outcome of every attempt (the operators' metrics). */
  metrics?: Pick<CloudMetrics, 'attempt'> | undefined
  now: () => number
  random?: () => number
}

/**
 * The webhook dispatcher (docs/development/architecture.md#events-and-webhooks). In a loop: fan new events
 * out to the endpoints that want them (one delivery each), claim deliveries that are due, and attempt them
 * through p-queue, bounded overall and per endpoint. The delivery rows are the queue: a claim is a lease
 * (claimed_until), so the work of an instance that dies is taken over when its lease runs out, and
 * re-sent with the same webhook-id. An attempt's outcome is written by the AttemptRecorder.
 */
export class WebhookDispatcher {
  private readonly queue: PQueue
  private readonly recorder: AttemptRecorder
  /** Runs in flight, per endpoint and per tenant. */
  private readonly inFlight = new Map<string, number>()
  private readonly tenantInFlight = new Map<string, number>()
  /** One per attempt in flight, to cut them short when stopping. */
  private readonly aborts = new Set<AbortController>()
  private running = false
  private loop: Promise<void> | undefined
  private waker: (() => void) | undefined
  private woken = false

  constructor(private readonly options: DispatcherOptions) {
    this.queue = new PQueue({ concurrency: options.settings.concurrency })
    this.recorder = new AttemptRecorder(options)
    options.outbox.onWake(() => this.wake())
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.loop = this.run()
  }

  /**
   * Stops taking work, lets attempts in flight finish for `graceMs`, then cuts the rest short. A cut
   * attempt is not logged; its claim is dropped, so the next dispatcher sends it again, with the same
   * webhook-id (the receiver may have had it: at-least-once,
   * docs/decisions/0020-webhook-outbox.md).
   */
  async stop(graceMs = 5000): Promise<void> {
    this.running = false
    this.wake()
    await this.loop
    const timer = setTimeout(() => {
      for (const abort of this.aborts) abort.abort()
    }, graceMs)
    await this.queue.onIdle()
    clearTimeout(timer)
  }

  /** Look now rather than at the next poll: events were just committed, or a slot came free. */
  wake(): void {
    this.woken = true
    this.waker?.()
  }

  private async run(): Promise<void> {
    // SQLite has one dispatcher, this process: a claim left from before is from a process that died.
    let claimsToRelease = this.options.dialect === 'sqlite'
    while (this.running) {
      this.woken = false
      let busy = false
      try {
        if (claimsToRelease) {
          await this.options.stores.read.deliveries.releaseAllClaims()
          claimsToRelease = false
        }
        // Round again at once only if there may be more: a full batch of events fanned out, or every
        // free slot filled. Otherwise wait for a wake (events committed, a slot freed) or the poll.
        busy = (await this.fanOut()) >= FAN_OUT_BATCH
        busy = (await this.dispatchDue()) || busy
      } catch (err) {
        this.options.log.error({ err }, 'webhook dispatch round failed')
      }
      if (!busy && !this.woken && this.running) await this.idle()
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, IDLE_POLL_MS)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.waker = () => {
        this.waker = undefined
        done()
      }
    })
  }

  /** Makes deliveries of events not yet fanned out; returns how many events it took. */
  private async fanOut(): Promise<number> {
    const nowMicros = this.options.now()
    return this.options.stores.transaction((s) =>
      fanOutEvents(s, {
        nowMicros,
        limit: FAN_OUT_BATCH,
        lock: this.options.dialect === 'postgres' ? 'skip' : 'none',
      }),
    )
  }

  /**
   * Claims due deliveries for the free slots and starts them; true if it filled them all. A slot
   * takes a run: up to RUN_LENGTH due deliveries of one endpoint, oldest first, attempted one after
   * another. One claim (and one wait for durability) then serves many attempts, so an endpoint with
   * one attempt at a time still takes hundreds a second, and keeps its order.
   */
  private async dispatchDue(): Promise<boolean> {
    const { settings } = this.options
    const free = settings.concurrency - this.queue.pending - this.queue.size
    if (free <= 0) return false
    const now = this.options.now()
    // An endpoint with every slot taken has nothing to gain from this round; were its deliveries
    // read, a slow endpoint's backlog would fill the page and stall every other endpoint behind it.
    const full = [...this.inFlight]
      .filter(([, count]) => count >= settings.endpointConcurrency)
      .map(([endpointId]) => endpointId)
    // Likewise a tenant holding its share of the slots: one tenant with many endpoints whose receivers
    // hang would otherwise take every slot, and every other tenant's deliveries would wait behind it.
    const fullTenants = [...this.tenantInFlight]
      .filter(([, count]) => count >= settings.tenantConcurrency)
      .map(([tenantId]) => tenantId)
    const limit = free * RUN_LENGTH
    let pageFull = false
    const runs = await this.options.stores.transaction(async ({ deliveries }) => {
      const due = await deliveries.dueDeliveries(
        now,
        limit,
        this.options.dialect === 'postgres',
        full,
        fullTenants,
      )
      pageFull = due.length >= limit
      const planned = planRuns(
        due,
        free,
        (endpointId) => settings.endpointConcurrency - (this.inFlight.get(endpointId) ?? 0),
        (tenantId) => settings.tenantConcurrency - (this.tenantInFlight.get(tenantId) ?? 0),
      )
      // The k-th delivery of a run is reached after at most k attempts before it, each bounded by the
      // timeout: its lease covers that, so a dead instance's first deliveries are taken over soonest.
      const leases = new Map<string, number>()
      for (const run of planned)
        run.forEach((delivery, k) => {
          leases.set(delivery.id, now + ((k + 1) * settings.timeoutSeconds + 60) * 1_000_000)
        })
      await deliveries.claim(leases)
      const loaded = new Map((await deliveries.forAttempt([...leases.keys()])).map((d) => [d.delivery.id, d]))
      return planned.map((run) =>
        run.flatMap((d) => {
          const due = loaded.get(d.id)
          return due ? [{ ...due, lease: leases.get(d.id) as number }] : []
        }),
      )
    })
    // No event goes out whose change a power cut could still undo (SQLite: the WAL's fsync).
    if (runs.length > 0) await this.options.durable?.()
    for (const run of runs) {
      const first = run[0]?.delivery
      if (first === undefined) continue
      const { endpoint_id: endpointId, tenant_id: tenantId } = first
      count(this.inFlight, endpointId, +1)
      count(this.tenantInFlight, tenantId, +1)
      this.queue
        .add(() => this.attemptRun(run))
        .catch((err) => this.options.log.error({ err, endpointId }, 'webhook run failed'))
        .finally(() => {
          count(this.inFlight, endpointId, -1)
          count(this.tenantInFlight, tenantId, -1)
          this.wake()
        })
    }
    // Round again at once when every free slot was filled, or when slots are left but the page was
    // full: its deliveries may all have been of endpoints or tenants now at their share, and the next
    // page (which leaves those out) may hold another tenant's.
    return runs.length > 0 && (runs.length >= free || pageFull)
  }

  /**
   * Attempts a run's deliveries in order. It stops at the first failure (the endpoint is likely down:
   * the rest would each wait out the timeout), when the endpoint stops being active, or when the
   * dispatcher stops; the deliveries not attempted are released for the next round.
   */
  private async attemptRun(run: readonly ClaimedDelivery[]): Promise<void> {
    let next = 0
    try {
      const first = run[0]?.delivery
      // A run is one endpoint's, and lasts seconds: its signing secrets are read and opened once.
      // A secret rotated meanwhile signs the endpoint's next run; the one replaced stays live for
      // the rotation's overlap, as receivers expect (Standard Webhooks, "Signature scheme").
      const secrets = first ? await this.secretsOf(first) : []
      while (next < run.length && this.running) {
        const due = run[next] as ClaimedDelivery
        next++
        const carryOn = await this.attempt(due, secrets)
        if (!carryOn) break
      }
    } finally {
      for (const { delivery, lease } of run.slice(next)) await this.release(delivery, lease)
    }
  }

  /** Drops this dispatcher's claim of a delivery it did not attempt, for the next round to take. */
  private async release(delivery: DeliveryRow, lease: number): Promise<void> {
    await this.options.stores.read.deliveries.update(
      delivery.tenant_id,
      delivery.id,
      { claimed_until: null },
      this.options.now(),
      lease,
    )
  }

  /** Sends one claimed delivery and records the outcome; true if the run may go on. */
  private async secretsOf(delivery: DeliveryRow): Promise<string[]> {
    const { tenant_id: tenantId, endpoint_id: endpointId } = delivery
    const live = await this.options.stores.read.endpoints.liveSecrets(
      tenantId,
      endpointId,
      this.options.now(),
    )
    return live.map((s) => this.options.secretBox().open(s.sealed_secret, secretContext(endpointId)))
  }

  private async attempt(
    { delivery, url, body, lease }: ClaimedDelivery,
    secrets: string[],
  ): Promise<boolean> {
    const { now } = this.options
    const startedAt = now()
    const abort = new AbortController()
    this.aborts.add(abort)
    let result: AttemptResult
    try {
      result = await this.options.sender.send(url, delivery.event_id, body, secrets, abort.signal)
    } finally {
      this.aborts.delete(abort)
    }
    if (abort.signal.aborted) {
      await this.release(delivery, lease)
      return false
    }
    const outcome = await this.recorder.record(delivery, lease, result, startedAt, now())
    if (!outcome.recorded) {
      this.options.metrics?.attempt('lost_claim')
      this.options.log.warn(
        { deliveryId: delivery.id, endpointId: delivery.endpoint_id, status: result.status },
        'webhook attempt outlived its claim; another dispatcher owns the delivery, outcome not recorded',
      )
      return false
    }
    const succeeded = result.status !== null && result.status >= 200 && result.status < 300
    this.options.metrics?.attempt(
      succeeded ? 'succeeded' : result.error === ADDRESS_NOT_ALLOWED ? 'refused_address' : 'failed',
    )
    const logged = {
      tenantId: delivery.tenant_id,
      deliveryId: delivery.id,
      endpointId: delivery.endpoint_id,
      attempt: delivery.attempts + 1,
      status: result.status,
      error: result.error,
      // The whole error, which the attempt log leaves out (attempt-error.ts): for the operator only.
      detail: result.errorDetail,
    }
    // A refused address is someone pointing a webhook inside the network, or a receiver's DNS gone
    // wrong: the operator hears of it, with the address and host the tenant's log does not show.
    if (result.error === ADDRESS_NOT_ALLOWED)
      this.options.log.warn(logged, 'webhook attempt refused: the address is not allowed')
    else this.options.log.debug(logged, succeeded ? 'webhook delivered' : 'webhook attempt failed')
    return succeeded && outcome.endpointActive
  }
}

/** Adds `by` to a count kept in a map, dropping it at zero. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by
  if (next > 0) counts.set(key, next)
  else counts.delete(key)
}

/** A claimed delivery with what its attempt needs, and the claim's lease. */
interface ClaimedDelivery extends DueDelivery {
  lease: number
}

/**
 * Splits due deliveries (oldest first) into runs of one endpoint each: at most `slots` runs, at most
 * `freeFor(endpoint)` runs per endpoint and `freeForTenant(tenant)` per tenant (its share of the
 * slots), RUN_LENGTH deliveries a run. Runs of one endpoint take its deliveries in turn, so with one
 * slot per endpoint they are attempted in their order.
 */
export function planRuns<T extends { endpoint_id: string; tenant_id?: string }>(
  due: readonly T[],
  slots: number,
  freeFor: (endpointId: string) => number,
  freeForTenant: (tenantId: string) => number = () => Number.POSITIVE_INFINITY,
): T[][] {
  const runs: T[][] = []
  const open = new Map<string, T[][]>()
  const tenantRuns = new Map<string, number>()
  for (const delivery of due) {
    let endpointRuns = open.get(delivery.endpoint_id)
    if (!endpointRuns) {
      endpointRuns = []
      open.set(delivery.endpoint_id, endpointRuns)
    }
    let run = endpointRuns.find((r) => r.length < RUN_LENGTH)
    if (!run) {
      const tenant = delivery.tenant_id ?? ''
      const taken = tenantRuns.get(tenant) ?? 0
      if (runs.length >= slots || endpointRuns.length >= freeFor(delivery.endpoint_id)) continue
      if (taken >= freeForTenant(tenant)) continue
      tenantRuns.set(tenant, taken + 1)
      run = []
      endpointRuns.push(run)
      runs.push(run)
    }
    run.push(delivery)
  }
  return runs
}
