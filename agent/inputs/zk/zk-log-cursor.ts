/**
 * Where the agent is in a terminal's attendance log. The ZK protocol has no cursor: every read
 * returns the whole log (docs/development/zk-protocol.md), so the agent keeps its own, as the number
 * of records it has handed on and the keys of the last few of them. The keys are the overlap: a read
 * whose records at those places still have those keys is the same log grown at its end; one where
 * they moved is a log whose oldest records were dropped; one where they are gone is a log cleared on
 * the device. A time-based cursor ("records newer than the last one seen") would lose every punch
 * made after the device's clock went back, so the cursor never looks at times.
 */
export interface ZkLogCursor {
  /** Records of the log, from its start, that are stored (in the spool or in dead letters). */
  count: number
  /** Keys of the last records handed on, oldest first (at most ZK_CURSOR_OVERLAP). */
  tail: string[]
  /** The local wall time of the last record handed on (`YYYY-MM-DDTHH:mm:ss`). */
  lastTime?: string
}

/** Records whose keys are kept: enough that two different logs never share them by chance. */
export const ZK_CURSOR_OVERLAP = 16

export const EMPTY_ZK_CURSOR: ZkLogCursor = { count: 0, tail: [] }

/** What a read found, compared with the cursor. */
export type ZkLogChange =
  /** No cursor yet: the whole log is new. */
  | { kind: 'first' }
  /** The log is the one the cursor knows, with `from` onwards new (maybe none). */
  | { kind: 'grown' }
  /**
   * The records the cursor knows are still there, at a lower place: the device dropped `dropped`
   * of its oldest records (a full log that overwrites, or a partial clear).
   */
  | { kind: 'shifted'; dropped: number }
  /** The records the cursor knows are gone: the log was cleared (or the device replaced). */
  | { kind: 'cleared'; previousCount: number }

export interface ZkLogComparison {
  /** The first record of the read that is new. */
  from: number
  change: ZkLogChange
}

/** A read's record keys in log order, looked up one at a time (a log holds up to ~10^5 records). */
export interface ZkLogKeys {
  readonly length: number
  key(index: number): string
}

function tailEndsAt(keys: ZkLogKeys, tail: readonly string[], end: number): boolean {
  const start = end - tail.length
  if (start < 0 || end > keys.length) return false
  for (let i = 0; i < tail.length; i++) if (keys.key(start + i) !== tail[i]) return false
  return true
}

/** Compares a read's record keys, in log order, with the cursor. */
export function compareZkLog(cursor: ZkLogCursor, keys: ZkLogKeys): ZkLogComparison {
  if (cursor.count === 0 || cursor.tail.length === 0) return { from: 0, change: { kind: 'first' } }
  if (tailEndsAt(keys, cursor.tail, cursor.count)) return { from: cursor.count, change: { kind: 'grown' } }
  // The last place first: the newest run of the known keys is the one the cursor left off at.
  const first = cursor.tail[0]
  for (let end = keys.length; end >= cursor.tail.length; end--) {
    if (keys.key(end - cursor.tail.length) === first && tailEndsAt(keys, cursor.tail, end)) {
      return { from: end, change: { kind: 'shifted', dropped: Math.max(0, cursor.count - end) } }
    }
  }
  return { from: 0, change: { kind: 'cleared', previousCount: cursor.count } }
}

/** The cursor once the records up to `through` (exclusive) of a read are stored. */
export function advanceZkCursor(keys: ZkLogKeys, through: number, lastTime: string | undefined): ZkLogCursor {
  const tail: string[] = []
  for (let i = Math.max(0, through - ZK_CURSOR_OVERLAP); i < through; i++) tail.push(keys.key(i))
  const cursor: ZkLogCursor = { count: through, tail }
  if (lastTime !== undefined) cursor.lastTime = lastTime
  return cursor
}

/** Device clocks step by whole seconds and drift slowly: a step back of more than this is a change. */
export const ZK_CLOCK_BACK_TOLERANCE_SECONDS = 60

/**
 * The first place, among records `from` onwards in log order, where a record is older than the one
 * before it by more than the tolerance: the device's clock was set back between the two.
 * `previous` is the time of the record before `from`, when known. Times are local ISO wall times.
 */
export function findClockStepBack(
  timeAt: (index: number) => string | undefined,
  from: number,
  to: number,
  previous: string | undefined,
  toleranceSeconds = ZK_CLOCK_BACK_TOLERANCE_SECONDS,
): { index: number; from: string; to: string } | undefined {
  let last = previous
  for (let index = from; index < to; index++) {
    const time = timeAt(index)
    if (time === undefined) continue
    if (last !== undefined && secondsBetween(time, last) > toleranceSeconds) {
      return { index, from: last, to: time }
    }
    last = time
  }
  return undefined
}

/** `later` minus `earlier`, both local ISO wall times, in seconds (read as UTC: only the gap matters). */
function secondsBetween(earlier: string, later: string): number {
  return (Date.parse(`${later}Z`) - Date.parse(`${earlier}Z`)) / 1000
}
