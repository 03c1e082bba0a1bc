import { punchId } from '../../agent/punch/punch-id.js'
import type { SpooledPunch } from '../../agent/punch/spooled-punch.js'
import { formatServerTime, formatTimestamp, nowMicros } from '../../shared/time.js'
import { BENCH_DEVICE_ID } from './agent-config.js'
import type { PayloadSource } from './agent-mqtt-load.js'

const IST_MINUTES = 330

/** Employee codes E000001…, the shape bench-database.ts seeds. */
export function benchEmployeeCodes(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `E${String(i + 1).padStart(6, '0')}`)
}

/**
 * MQTT payloads as docs/decisions/0030-mqtt-json-payload.md shows them
 * (`{"employeeCode","punchType","punchedAt"}`, device time with its offset), each a new punch: cycling over
 * the employees, one millisecond apart from some hours ago, so every one is a valid punch the agent spools
 * (not a dead letter for a wrong clock).
 */
export function mqttPunchPayloads(employeeCodes: readonly string[]): PayloadSource {
  const start = (Date.now() - 6 * 3_600_000) * 1000
  let n = 0
  return () => {
    const i = n++
    return JSON.stringify({
      employeeCode: employeeCodes[i % employeeCodes.length],
      punchType: Math.floor(i / employeeCodes.length) % 2 === 0 ? 'IN' : 'OUT',
      punchedAt: formatTimestamp(start + i * 1000, IST_MINUTES),
    })
  }
}

/**
 * The i-th punch of a drain backlog, as the agent would have spooled it (normalize.ts): its id from
 * punch-id.ts (unique, since every punch has its own instant), device time in IST. Derived from i
 * alone, so the spool writer and the direct baseline produce the very same punches without holding
 * a million of them in memory. `start` (µs) is the first punch's instant: recent enough for the
 * cloud's backfill window, old enough that the last is not in the future.
 */
export function drainPunch(i: number, employeeCodes: readonly string[], start: number): SpooledPunch {
  const at = start + i * 10_000 // 10 ms apart: a million span under three hours
  const punchType = Math.floor(i / employeeCodes.length) % 2 === 0 ? 'IN' : 'OUT'
  const employeeCode = employeeCodes[i % employeeCodes.length] as string
  return {
    id: punchId(BENCH_DEVICE_ID, employeeCode, at, punchType),
    deviceId: BENCH_DEVICE_ID,
    employeeCode,
    punchType,
    punchedAt: formatTimestamp(at, IST_MINUTES),
    receivedAt: formatServerTime(at + 1_000_000),
  }
}

/** A start for drainPunch: `count` punches 10 ms apart ending an hour ago. */
export function drainStart(count: number): number {
  return nowMicros() - 3_600_000_000 - count * 10_000
}
