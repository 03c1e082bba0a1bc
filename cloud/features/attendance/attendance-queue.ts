import { CoalescedCall } from '../../../shared/coalesced-call.js'
import type { AttendanceWorkStore } from './attendance-work-store.js'
import { localDate } from './work-dates.js'

/**
 * The worker is woken at most once in this many ms, however many punches commit (the first after a
 * quiet spell at once): a round then takes the days of every punch since, rather than one round
 * per commit competing with ingestion for the CPU. Days are not waited for by the second.
 */
const WAKE_GAP_MS = 250

/**
 * Where a new punch tells the attendance engine which day it touched: one row per employee and
 * local date, written in the punch's own transaction, so a punch stored is a day recomputed even if
 * the process dies at once. The worker does the recompute off the request path, so ingestion pays
 * one upsert per batch rather than a day's computation per punch.
 */
export class AttendanceQueue {
  private wakeWorker: () => void = () => {}
  private readonly wake = new CoalescedCall(() => this.wakeWorker(), WAKE_GAP_MS)

  constructor(
    private readonly now: () => number,
    /** False only where a benchmark measures ingestion without the queue. */
    private readonly enabled = true,
  ) {}

  onWake(wake: () => void): void {
    this.wakeWorker = wake
  }

  /** Queues the days of these punches through `store`: pass the transaction's. */
  async enqueue(
    store: Pick<AttendanceWorkStore, 'enqueue'>,
    tenant: { id: string; timeZone: string },
    punches: readonly { employeeCode: string; punchedAt: number }[],
  ): Promise<void> {
    const days = this.days(tenant, punches)
    if (days.length > 0) await store.enqueue(tenant.id, days, this.now())
  }

  /**
   * The days `enqueue` queues, for a caller that writes them itself in one statement with the
   * punches (the single-punch path on PostgreSQL); it must call `committed` after, as with `enqueue`.
   */
  days(
    tenant: { timeZone: string },
    punches: readonly { employeeCode: string; punchedAt: number }[],
  ): { employeeCode: string; localDate: string }[] {
    if (!this.enabled) return []
    const seen = new Map<string, { employeeCode: string; localDate: string }>()
    for (const p of punches) {
      const date = localDate(p.punchedAt, tenant.timeZone)
      seen.set(`${p.employeeCode}|${date}`, { employeeCode: p.employeeCode, localDate: date })
    }
    return [...seen.values()]
  }

  /** Call after the transaction that queued days has committed. */
  committed(): void {
    this.wake.request()
  }
}
