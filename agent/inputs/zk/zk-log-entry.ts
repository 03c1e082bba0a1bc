import type { ZkLogKeys } from './zk-log-cursor.js'
import type { ZkAttlogEvent } from './zk-realtime.js'
import type { ZkAttendanceLog, ZkAttendanceRecord } from './zk-records.js'
import { formatZkWallTime, type ZkWallTime } from './zk-time.js'

/**
 * A record of a terminal's log as the agent hands it on. A readable one becomes an ATTLOG line
 * (`PIN \t YYYY-MM-DD HH:mm:ss \t state \t verify \t workcode`, the line push terminals upload,
 * docs/decisions/0028-zk-attlog-and-status-codes.md), so that a punch read over port 4370 is made
 * exactly as one pushed over ADMS: same time zone rule, status map, PIN rule and punch id. One that
 * cannot be read goes to dead letters with its bytes.
 */
export type LogEntry =
  | {
      /** What identifies the record within its log: its PIN, time and state. */
      key: string
      /** Local wall time, `YYYY-MM-DDTHH:mm:ss`. */
      time: string
      line: string
    }
  | { key: string; time?: string; line?: undefined; raw: string; problem: string }

function key(pin: string, time: string, state: number): string {
  return `${pin}\t${time}\t${state}`
}

function line(pin: string, time: ZkWallTime, state: number, verify: number, workcode = 0): string {
  return `${pin}\t${formatZkWallTime(time).replace('T', ' ')}\t${state}\t${verify}\t${workcode}`
}

function recordEntry(record: ZkAttendanceRecord, users: ReadonlyMap<number, string> | undefined): LogEntry {
  const time = formatZkWallTime(record.time)
  // An 8-byte record holds the device's internal user number; its user table says whose it is.
  const pin = record.userId ?? (record.uid === undefined ? undefined : users?.get(record.uid))
  if (pin === undefined) {
    const raw = `uid ${record.uid}\t${time.replace('T', ' ')}\t${record.state}\t${record.verify}`
    return {
      key: `uid:${key(String(record.uid), time, record.state)}`,
      time,
      raw,
      problem: `the record's user number ${record.uid} is no user on the device, so its PIN is unknown`,
    }
  }
  return {
    key: key(pin, time, record.state),
    time,
    line: line(pin, record.time, record.state, record.verify, record.workcode),
  }
}

/**
 * The records of a read in log order, the unreadable ones in their places, made into entries one at
 * a time from the raw log (openZkAttendanceDataset): a copy of a large log as objects or text would
 * take several times its bytes, in an agent that runs in a small heap.
 */
export class ZkLogView implements ZkLogKeys {
  constructor(
    private readonly log: Pick<ZkAttendanceLog, 'length' | 'at'>,
    private readonly users?: ReadonlyMap<number, string>,
  ) {}

  get length(): number {
    return this.log.length
  }

  entry(index: number): LogEntry {
    const found = this.log.at(index)
    if ('malformed' in found) {
      const bad = found.malformed
      return { key: `bytes:${bad.bytes}`, raw: bad.bytes, problem: bad.error }
    }
    return recordEntry(found.record, this.users)
  }

  key(index: number): string {
    return this.entry(index).key
  }

  time(index: number): string | undefined {
    return this.entry(index).time
  }
}

/**
 * A real-time punch as a log entry, or undefined when its PIN is not known: an 8-byte device
 * reports its internal user number, mapped here through `uidUsers` when given.
 */
export function realtimeEntry(
  event: ZkAttlogEvent,
  uidUsers?: ReadonlyMap<number, string>,
): { key: string; line: string } | undefined {
  const pin = uidUsers ? uidUsers.get(Number(event.userId)) : event.userId
  if (pin === undefined) return undefined
  const time = formatZkWallTime(event.time)
  return { key: key(pin, time, event.state), line: line(pin, event.time, event.state, event.verify) }
}
