import { describe, expect, it } from 'vitest'
import {
  formatMinutes,
  tenantLocalToRfc3339,
  timeInDay,
  todayIn,
} from '../../../../cloud/console/src/attendance-time.js'

describe('attendance times', () => {
  it('writes durations as h:mm', () => {
    expect(formatMinutes(0)).toBe('0:00')
    expect(formatMinutes(485)).toBe('8:05')
    expect(formatMinutes(1500)).toBe('25:00')
  })

  it('reads wall times as the server wrote them, with the date when it is not the work date', () => {
    expect(timeInDay('2026-11-21T09:02:00+05:30', '2026-11-21')).toBe('09:02')
    expect(timeInDay('2026-11-22T06:00:00+05:30', '2026-11-21')).toMatch(/^06:00 \(.*22.*\)$/)
    expect(timeInDay(null, '2026-11-21')).toBe('—')
  })

  it("turns a wall time typed in the tenant's zone into RFC 3339 with that zone's offset", () => {
    expect(tenantLocalToRfc3339('2026-11-21', '09:02', 'Asia/Kolkata')).toBe('2026-11-21T09:02:00+05:30')
    expect(tenantLocalToRfc3339('2026-07-01', '22:00', 'Europe/London')).toBe('2026-07-01T22:00:00+01:00')
    expect(tenantLocalToRfc3339('2026-01-01', '22:00', 'Europe/London')).toBe('2026-01-01T22:00:00Z')
    expect(tenantLocalToRfc3339('2026-11-21', '', 'Asia/Kolkata')).toBeUndefined()
    expect(tenantLocalToRfc3339('2026-02-30', '09:00', 'Asia/Kolkata')).toBeUndefined()
  })

  it("is today in the tenant's zone", () => {
    expect(todayIn('Asia/Kolkata', Date.UTC(2026, 10, 21, 20, 0))).toBe('2026-11-22')
    expect(todayIn('UTC', Date.UTC(2026, 10, 21, 20, 0))).toBe('2026-11-21')
  })
})
