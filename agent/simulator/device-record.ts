import { formatInZone } from '../../shared/time.js'
import type { ScriptedPunch } from './punch-script.js'

/** The record formats a simulated device can write (those the agent reads: agent/formats/). */
export const SIMULATOR_FORMATS = ['json', 'zk-attlog', 'csv'] as const
export type SimulatorFormat = (typeof SIMULATOR_FORMATS)[number]

/**
 * The step between two times each format can write. JSON carries RFC 3339 with a fraction; ATTLOG
 * and CSV carry a local `YYYY-MM-DD HH:mm:ss`, as terminals write them.
 */
export const FORMAT_RESOLUTION_MICROS: Readonly<Record<SimulatorFormat, number>> = {
  json: 1_000,
  'zk-attlog': 1_000_000,
  csv: 1_000_000,
}

/**
 * ZKTeco/eSSL status codes (docs/decisions/0028-zk-attlog-and-status-codes.md): 0 check-in, 1 check-out;
 * the agent's default statusMap.
 */
const ZK_STATUS = { IN: 0, OUT: 1 } as const
/** ATTLOG's verify mode (1: fingerprint) and work code (0: none), as a terminal fills them. */
const ZK_VERIFY = 1
const ZK_WORKCODE = 0

/**
 * The simulator's CSV columns, zero-based: what the agent's `serial.csv.columns` must say for it.
 * `employeeCode,punchedAt,status`, e.g. `E001,2026-11-21 09:00:00,0`.
 */
export const SIMULATOR_CSV_COLUMNS = { employeeCode: 0, punchedAt: 1, status: 2 } as const

/** A local wall time `YYYY-MM-DD HH:mm:ss` in `timeZone` (sub-second parts are not written). */
function localWallTime(at: number, timeZone: string): string {
  return formatInZone(at, timeZone).slice(0, 19).replace('T', ' ')
}

/**
 * One punch as a device writes it, without a line end. Local times are read back by the agent in
 * the device's time zone, so `timeZone` must be the one the agent has for this device; in a zone
 * with daylight saving time, the repeated hour cannot be told apart in local time (no format with
 * a local time can), which is why JSON carries the offset.
 */
export function deviceRecord(punch: ScriptedPunch, format: SimulatorFormat, timeZone: string): string {
  switch (format) {
    case 'json':
      // The MQTT JSON payload (docs/decisions/0030-mqtt-json-payload.md).
      return JSON.stringify({
        employeeCode: punch.employeeCode,
        punchType: punch.punchType,
        punchedAt: formatInZone(punch.at, timeZone),
      })
    case 'zk-attlog':
      // ZKTeco/eSSL ATTLOG (docs/decisions/0028-zk-attlog-and-status-codes.md):
      // PIN \t YYYY-MM-DD HH:mm:ss \t status \t verify \t workcode.
      return [
        punch.employeeCode,
        localWallTime(punch.at, timeZone),
        ZK_STATUS[punch.punchType],
        ZK_VERIFY,
        ZK_WORKCODE,
      ].join('\t')
    case 'csv':
      // Employee codes are [A-Za-z0-9._-] (shared/employee.ts): nothing here needs quoting.
      return [punch.employeeCode, localWallTime(punch.at, timeZone), ZK_STATUS[punch.punchType]].join(',')
  }
}
