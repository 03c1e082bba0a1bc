import type { AdmsLogRecord, AttlogFields } from './adms-attlog.js'
import { AdmsRecordNotAcknowledgedError } from './adms-errors.js'

interface Waiter {
  promise: Promise<void>
  resolve: () => void
  reject: (err: Error) => void
}

function waiter(): Waiter {
  let resolve = () => {}
  let reject: (err: Error) => void = () => {}
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/**
 * A terminal's attendance log and its upload cursor (Attendance PUSH, table=ATTLOG). Every record
 * gets a stamp, strictly increasing; the cursor is the stamp of the last record the server has,
 * first from the handshake's ATTLOGStamp, then from each acknowledged batch. Records above the
 * cursor are pending. Acknowledgement only ever moves up the log, so the acknowledged records are
 * always the oldest ones.
 */
export class AdmsAttendanceLog {
  readonly records: AdmsLogRecord[] = []
  private cursorStamp = 0
  private lastStamp: number
  /** Who waits for a record's acknowledgement, by stamp. */
  private readonly waiters = new Map<number, Waiter>()

  constructor(
    firstStamp: number,
    /** Beyond this many records, the oldest acknowledged ones are dropped. */
    private readonly capacity: number,
  ) {
    this.lastStamp = firstStamp - 1
  }

  get cursor(): number {
    return this.cursorStamp
  }

  /** Adds a record; resolves once it is acknowledged, rejects if it never will be. */
  append(fields: AttlogFields, line: string): Promise<void> {
    this.lastStamp++
    const record: AdmsLogRecord = {
      ...fields,
      stamp: this.lastStamp,
      line,
      acknowledged: false,
      acknowledgedBy: undefined,
    }
    this.records.push(record)
    this.trim()
    const wait = waiter()
    this.waiters.set(record.stamp, wait)
    return wait.promise
  }

  /** Index of the first record above the cursor (records are in stamp order). */
  private firstPending(): number {
    let lo = 0
    let hi = this.records.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((this.records[mid] as AdmsLogRecord).stamp <= this.cursorStamp) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  hasPending(): boolean {
    return this.firstPending() < this.records.length
  }

  /** The next `size` records above the cursor. */
  nextBatch(size: number): AdmsLogRecord[] {
    const start = this.firstPending()
    return this.records.slice(start, start + size)
  }

  /**
   * A handshake's ATTLOGStamp (0: upload everything). The server says it has every record up to
   * it: firmware will not send those again, and takes them as acknowledged.
   */
  resumeFrom(stamp: number): void {
    this.cursorStamp = stamp
    // New records go above it: a firmware stamp grows with time, and a record born "acknowledged"
    // would never be sent.
    this.lastStamp = Math.max(this.lastStamp, stamp)
    for (const record of this.records) {
      if (record.stamp > stamp) break
      if (!record.acknowledged) this.acknowledge(record, 'stamp')
    }
  }

  /** An `OK: n` for `batch`: the cursor moves to its last stamp. Returns the records newly acknowledged. */
  acknowledged(batch: readonly AdmsLogRecord[]): number {
    const last = batch.at(-1)
    if (last) this.cursorStamp = Math.max(this.cursorStamp, last.stamp)
    let count = 0
    for (const record of batch) {
      if (record.acknowledged) continue
      this.acknowledge(record, 'reply')
      count++
    }
    return count
  }

  private acknowledge(record: AdmsLogRecord, by: 'reply' | 'stamp'): void {
    record.acknowledged = true
    record.acknowledgedBy = by
    this.waiters.get(record.stamp)?.resolve()
    this.waiters.delete(record.stamp)
  }

  /** Resolves once every record in the log now is acknowledged. */
  flush(): Promise<void> {
    const last = this.records.findLast((r) => !r.acknowledged)
    return (last && this.waiters.get(last.stamp)?.promise) ?? Promise.resolve()
  }

  /** CLEAR LOG: every record is erased; those not acknowledged never will be. */
  clear(): void {
    this.records.length = 0
    this.abandon('CLEAR LOG erased the record before it was acknowledged')
  }

  /** Rejects every wait for an acknowledgement (the device stopped). */
  abandon(why: string): void {
    for (const wait of this.waiters.values()) wait.reject(new AdmsRecordNotAcknowledgedError(why))
    this.waiters.clear()
  }

  /** A full log drops its oldest acknowledged records (a terminal set to overwrite old records). */
  private trim(): void {
    if (this.records.length <= this.capacity) return
    const target = this.records.length - Math.floor(this.capacity * 0.9)
    let drop = 0
    while (drop < target && this.records[drop]?.acknowledged) drop++
    if (drop > 0) this.records.splice(0, drop)
  }
}
