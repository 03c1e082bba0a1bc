import { describe, expect, it } from 'vitest'
import { parseBackfillRange } from '../../../agent/inputs/backfill-range.js'
import { DeviceCommandError } from '../../../agent/inputs/device-report.js'
import { parseTimestamp } from '../../../shared/time.js'

const now = parseTimestamp('2026-11-26T12:00:00+05:30') as number
const micros = (iso: string) => parseTimestamp(iso) as number

describe('backfill ranges as IT staff type them', () => {
  it('read dates as whole days in the device zone, both ends included', () => {
    expect(parseBackfillRange('2026-11-01', '2026-11-20', 'Asia/Kolkata', now)).toEqual({
      from: micros('2026-11-01T00:00:00+05:30'),
      to: micros('2026-11-20T23:59:59+05:30'),
    })
  })

  it('read local times, with or without seconds, and RFC 3339 times as they are', () => {
    expect(parseBackfillRange('2026-11-20 09:00', '2026-11-20T18:30:15', 'Asia/Kolkata', now)).toEqual({
      from: micros('2026-11-20T09:00:00+05:30'),
      to: micros('2026-11-20T18:30:15+05:30'),
    })
    expect(
      parseBackfillRange('2026-11-20T03:30:00Z', '2026-11-20T04:00:00+00:00', 'Asia/Kolkata', now),
    ).toEqual({
      from: micros('2026-11-20T09:00:00+05:30'),
      to: micros('2026-11-20T09:30:00+05:30'),
    })
  })

  it('say what is wrong with a range that is not one', () => {
    const wrong = (from: string, to: string) => {
      try {
        parseBackfillRange(from, to, 'Asia/Kolkata', now)
      } catch (err) {
        expect(err).toBeInstanceOf(DeviceCommandError)
        return (err as DeviceCommandError).message
      }
      throw new Error('accepted')
    }
    expect(wrong('yesterday', '2026-11-20')).toMatch(/^from "yesterday" is not a date/)
    expect(wrong('2026-11-20', '2026-13-01')).toMatch(/^to "2026-13-01" is not a date/)
    expect(wrong('2026-11-20', '2026-11-19')).toBe('from is after to')
    expect(wrong('2024-01-01', '2026-11-20')).toMatch(/longer than 400 days/)
    expect(wrong('2026-12-01', '2026-12-02')).toBe('from is in the future')
  })
})
