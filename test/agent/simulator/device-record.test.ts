/**
 * `hajri-agent simulate`: what the simulated device writes is read by the agent's own
 * parsers (agent/formats/) and normalisation (agent/punch/normalize.ts) as the same employee,
 * direction and instant it was made from, in every format, for times and zones fast-check picks.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { csvPunchParser } from '../../../agent/formats/csv-punch.js'
import { parseJsonPunches } from '../../../agent/formats/json-punch.js'
import { parseZkAttlog } from '../../../agent/formats/zk-attlog.js'
import type { FrameParse } from '../../../agent/punch/device-punch.js'
import { normalizePunch } from '../../../agent/punch/normalize.js'
import {
  deviceRecord,
  FORMAT_RESOLUTION_MICROS,
  SIMULATOR_CSV_COLUMNS,
  type SimulatorFormat,
} from '../../../agent/simulator/device-record.js'
import type { ScriptedPunch } from '../../../agent/simulator/punch-script.js'
import { parseTimestamp } from '../../../shared/time.js'

const PARSERS: Record<SimulatorFormat, (frame: string) => FrameParse> = {
  json: parseJsonPunches,
  'zk-attlog': parseZkAttlog,
  // The column map docs/site-agent/simulator.md gives IT staff for the simulator's CSV.
  csv: csvPunchParser({ ...SIMULATOR_CSV_COLUMNS }),
}

/** What the agent makes of one record: parse, then normalise in the device's zone (default statusMap). */
function agentReads(record: string, format: SimulatorFormat, timeZone: string) {
  const parsed = PARSERS[format](record)
  expect(parsed.malformed).toEqual([])
  expect(parsed.punches).toHaveLength(1)
  const normalized = normalizePunch(parsed.punches[0]!, {
    deviceId: 'simulator',
    timeZone,
    clockFloor: parseTimestamp('2000-01-01T00:00:00Z')!,
    now: parseTimestamp('2199-01-01T00:00:00Z')!,
  })
  if (!normalized.ok) throw new Error(`the agent parked ${record}: ${normalized.detail}`)
  return normalized.punch
}

const code = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
const punchType = fc.constantFrom('IN' as const, 'OUT' as const)
/** µs between 2001 and 2099, to the resolution of `format`. */
const instant = (format: SimulatorFormat) =>
  fc
    .integer({ min: 978_307_200_000, max: 4_102_444_799_999 })
    .map(
      (ms) => Math.floor((ms * 1000) / FORMAT_RESOLUTION_MICROS[format]) * FORMAT_RESOLUTION_MICROS[format],
    )
/** Zones without daylight saving time: a local time there names one instant. */
const steadyZone = fc.constantFrom('Asia/Kolkata', 'UTC', 'Asia/Kathmandu', 'Asia/Dubai', 'Asia/Tokyo')

describe('deviceRecord', () => {
  it('writes the MQTT JSON payload, ATTLOG and CSV lines', () => {
    const punch: ScriptedPunch = {
      employeeCode: 'E001',
      punchType: 'OUT',
      at: parseTimestamp('2026-11-21T18:05:09+05:30')!,
    }
    expect(JSON.parse(deviceRecord(punch, 'json', 'Asia/Kolkata'))).toEqual({
      employeeCode: 'E001',
      punchType: 'OUT',
      punchedAt: '2026-11-21T18:05:09+05:30',
    })
    expect(deviceRecord(punch, 'zk-attlog', 'Asia/Kolkata')).toBe('E001\t2026-11-21 18:05:09\t1\t1\t0')
    expect(deviceRecord(punch, 'csv', 'Asia/Kolkata')).toBe('E001,2026-11-21 18:05:09,1')
    expect(deviceRecord({ ...punch, punchType: 'IN' }, 'zk-attlog', 'UTC')).toBe(
      'E001\t2026-11-21 12:35:09\t0\t1\t0',
    )
  })

  for (const format of ['json', 'zk-attlog', 'csv'] as const) {
    it(`${format}: the agent reads back the employee, direction and instant`, () => {
      fc.assert(
        fc.property(code, punchType, instant(format), steadyZone, (employeeCode, type, at, zone) => {
          const punch = agentReads(
            deviceRecord({ employeeCode, punchType: type, at }, format, zone),
            format,
            zone,
          )
          expect(punch).toMatchObject({ employeeCode, punchType: type })
          expect(parseTimestamp(punch.punchedAt)).toBe(at)
        }),
        { numRuns: 300 },
      )
    })
  }

  it('json carries the offset, so even the repeated hour of a daylight saving change reads back', () => {
    const zone = fc.constantFrom('America/New_York', 'Europe/London', 'Australia/Sydney')
    fc.assert(
      fc.property(code, punchType, instant('json'), zone, (employeeCode, type, at, timeZone) => {
        const punch = agentReads(
          deviceRecord({ employeeCode, punchType: type, at }, 'json', timeZone),
          'json',
          timeZone,
        )
        expect(parseTimestamp(punch.punchedAt)).toBe(at)
      }),
      { numRuns: 300 },
    )
    // 2026-11-01 01:30 happens twice in New York; the second one, EST.
    const second = parseTimestamp('2026-11-01T01:30:00-05:00')!
    const record = deviceRecord(
      { employeeCode: 'E001', punchType: 'IN', at: second },
      'json',
      'America/New_York',
    )
    expect(parseTimestamp(agentReads(record, 'json', 'America/New_York').punchedAt)).toBe(second)
  })
})
