import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  formatInZone,
  formatTimestamp,
  isValidTimeZone,
  MAX_YEAR,
  MIN_YEAR,
  parseLocalTimestamp,
  parseTimestamp,
} from '../../shared/time.js'

const SECOND = 1_000_000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** µs of a UTC calendar time, computed independently of the code under test. */
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, micros = 0): number {
  return Date.UTC(year, month - 1, day, hour, minute, second) * 1000 + micros
}

describe('parseTimestamp', () => {
  it('reads UTC, in either case of Z', () => {
    expect(parseTimestamp('2026-11-21T03:30:00Z')).toBe(utc(2026, 11, 21, 3, 30))
    expect(parseTimestamp('2026-11-21T03:30:00z')).toBe(utc(2026, 11, 21, 3, 30))
  })

  it('applies positive, negative and zero offsets', () => {
    const instant = utc(2026, 11, 21, 3, 30)
    expect(parseTimestamp('2026-11-21T09:00:00+05:30')).toBe(instant)
    expect(parseTimestamp('2026-11-21T09:15:00+05:45')).toBe(instant)
    expect(parseTimestamp('2026-11-21T00:00:00-03:30')).toBe(instant)
    expect(parseTimestamp('2026-11-21T03:30:00+00:00')).toBe(instant)
    // RFC 3339 §4.3: -00:00 is UTC with an unknown local offset; the instant is the same.
    expect(parseTimestamp('2026-11-21T03:30:00-00:00')).toBe(instant)
    // An offset moves the instant across a date line.
    expect(parseTimestamp('2026-11-20T23:30:00-04:00')).toBe(instant)
  })

  it('accepts the separators RFC 3339 allows: T, t and (§5.6 note) a space', () => {
    const instant = utc(2026, 11, 21, 3, 30)
    expect(parseTimestamp('2026-11-21t03:30:00Z')).toBe(instant)
    expect(parseTimestamp('2026-11-21 03:30:00Z')).toBe(instant)
  })

  it('reads fractions of 1 to 6 digits exactly', () => {
    const base = utc(2026, 11, 21, 3, 30)
    expect(parseTimestamp('2026-11-21T03:30:00.5Z')).toBe(base + 500_000)
    expect(parseTimestamp('2026-11-21T03:30:00.05Z')).toBe(base + 50_000)
    expect(parseTimestamp('2026-11-21T03:30:00.123Z')).toBe(base + 123_000)
    expect(parseTimestamp('2026-11-21T03:30:00.000001Z')).toBe(base + 1)
    expect(parseTimestamp('2026-11-21T03:30:00.999999Z')).toBe(base + 999_999)
  })

  it('truncates 7 to 9 fraction digits to the microsecond, never rounding into the next second', () => {
    const base = utc(2026, 11, 21, 3, 30)
    expect(parseTimestamp('2026-11-21T03:30:00.1234567Z')).toBe(base + 123_456)
    expect(parseTimestamp('2026-11-21T03:30:00.123456789Z')).toBe(base + 123_456)
    expect(parseTimestamp('2026-11-21T03:30:00.999999999Z')).toBe(base + 999_999)
  })

  it('refuses 10 or more fraction digits, and a dot without digits', () => {
    expect(parseTimestamp('2026-11-21T03:30:00.1234567890Z')).toBeUndefined()
    expect(parseTimestamp('2026-11-21T03:30:00.Z')).toBeUndefined()
  })

  it('applies the Gregorian leap-year rules', () => {
    expect(parseTimestamp('2024-02-29T00:00:00Z')).toBe(utc(2024, 2, 29))
    expect(parseTimestamp('2000-02-29T00:00:00Z')).toBe(utc(2000, 2, 29))
    expect(parseTimestamp('2023-02-29T00:00:00Z')).toBeUndefined()
    // Divisible by 100 but not 400: not leap.
    expect(parseTimestamp('2100-02-29T00:00:00Z')).toBeUndefined()
    expect(parseTimestamp('1900-02-29T00:00:00Z')).toBeUndefined()
  })

  it('refuses dates and times that do not exist', () => {
    for (const text of [
      '2026-02-30T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-32T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T23:60:00Z',
      '2026-01-01T23:59:61Z',
    ]) {
      expect(parseTimestamp(text), text).toBeUndefined()
    }
  })

  it('reads a leap second (RFC 3339 §5.7) as the first instant of the next minute', () => {
    expect(parseTimestamp('2016-12-31T23:59:60Z')).toBe(utc(2017, 1, 1))
  })

  it('refuses offsets that are out of range or badly written', () => {
    for (const text of [
      '2026-11-21T09:00:00+24:00',
      '2026-11-21T09:00:00+05:60',
      '2026-11-21T09:00:00+0530',
      '2026-11-21T09:00:00+05',
      '2026-11-21T09:00:00 +05:30',
    ]) {
      expect(parseTimestamp(text), text).toBeUndefined()
    }
  })

  it('refuses a time without an offset, a bare date, and other text', () => {
    for (const text of [
      '2026-11-21T09:00:00',
      '2026-11-21 09:00:00',
      '2026-11-21',
      '',
      'now',
      '2026-1-21T09:00:00Z',
      '2026-11-21T9:00:00Z',
      '+12026-11-21T09:00:00Z',
      ' 2026-11-21T09:00:00Z',
      '2026-11-21T09:00:00Z ',
      '2026-11-21T09:00:00ZZ',
      // Non-ASCII digits must not slip through \d.
      '２０２６-11-21T09:00:00Z',
    ]) {
      expect(parseTimestamp(text), JSON.stringify(text)).toBeUndefined()
    }
  })

  it(`accepts years ${MIN_YEAR} to ${MAX_YEAR} and refuses the years just outside`, () => {
    expect(MIN_YEAR).toBe(1900)
    expect(MAX_YEAR).toBe(2199)
    expect(parseTimestamp('1900-01-01T00:00:00Z')).toBe(utc(1900, 1, 1))
    expect(parseTimestamp('1899-12-31T23:59:59Z')).toBeUndefined()
    expect(parseTimestamp('2200-01-01T00:00:00Z')).toBeUndefined()
    expect(parseTimestamp('0000-01-01T00:00:00Z')).toBeUndefined()
    expect(parseTimestamp('9999-12-31T23:59:59Z')).toBeUndefined()
    const last = parseTimestamp('2199-12-31T23:59:59.999999Z')
    expect(last).toBe(utc(2199, 12, 31, 23, 59, 59, 999_999))
    // The reason for the bound: µs must stay exact in a double.
    expect(Number.isSafeInteger(last)).toBe(true)
  })

  it('reads instants before the epoch', () => {
    expect(parseTimestamp('1969-12-31T23:59:59.5Z')).toBe(-500_000)
    expect(parseTimestamp('1950-06-15T12:00:00+05:30')).toBe(utc(1950, 6, 15, 6, 30))
  })
})

describe('formatTimestamp', () => {
  const base = utc(2026, 11, 21, 3, 30)

  it('writes no fraction for a whole second', () => {
    expect(formatTimestamp(base)).toBe('2026-11-21T03:30:00Z')
  })

  it('writes 3 fraction digits when the time is a whole millisecond', () => {
    expect(formatTimestamp(base + 500_000)).toBe('2026-11-21T03:30:00.500Z')
    expect(formatTimestamp(base + 1_000)).toBe('2026-11-21T03:30:00.001Z')
    expect(formatTimestamp(base + 120_000)).toBe('2026-11-21T03:30:00.120Z')
  })

  it('writes 6 fraction digits otherwise', () => {
    expect(formatTimestamp(base + 1)).toBe('2026-11-21T03:30:00.000001Z')
    expect(formatTimestamp(base + 123_456)).toBe('2026-11-21T03:30:00.123456Z')
    expect(formatTimestamp(base + 120_010)).toBe('2026-11-21T03:30:00.120010Z')
  })

  it('writes the wall time of the offset it is given, with the offset', () => {
    expect(formatTimestamp(base, 330)).toBe('2026-11-21T09:00:00+05:30')
    expect(formatTimestamp(base, -210)).toBe('2026-11-21T00:00:00-03:30')
    expect(formatTimestamp(base, -240)).toBe('2026-11-20T23:30:00-04:00')
    expect(formatTimestamp(base, 0)).toBe('2026-11-21T03:30:00Z')
    expect(formatTimestamp(base + 250_000, 345)).toBe('2026-11-21T09:15:00.250+05:45')
  })

  it('writes instants before the epoch with a positive fraction', () => {
    expect(formatTimestamp(-500_000)).toBe('1969-12-31T23:59:59.500Z')
    expect(formatTimestamp(-1)).toBe('1969-12-31T23:59:59.999999Z')
  })

  it('pads years to 4 digits at the lower bound', () => {
    expect(formatTimestamp(utc(1900, 1, 1))).toBe('1900-01-01T00:00:00Z')
  })
})

describe('formatInZone', () => {
  it('writes Asia/Kolkata times at +05:30', () => {
    expect(formatInZone(utc(2026, 11, 21, 3, 30), 'Asia/Kolkata')).toBe('2026-11-21T09:00:00+05:30')
    expect(formatInZone(utc(2026, 6, 30, 20, 0, 0, 1_000), 'Asia/Kolkata')).toBe(
      '2026-07-01T01:30:00.001+05:30',
    )
  })

  it('writes UTC as Z', () => {
    expect(formatInZone(utc(2026, 11, 21, 3, 30), 'UTC')).toBe('2026-11-21T03:30:00Z')
  })

  it('writes negative and fractional-hour offsets', () => {
    expect(formatInZone(utc(2026, 1, 15, 12), 'America/St_Johns')).toBe('2026-01-15T08:30:00-03:30')
    expect(formatInZone(utc(2026, 1, 15, 12), 'Asia/Kathmandu')).toBe('2026-01-15T17:45:00+05:45')
  })

  // EU rule: clocks change at 01:00 UTC on the last Sunday of March and of October.
  it('follows Europe/Berlin into summer time (29 March 2026)', () => {
    expect(formatInZone(utc(2026, 3, 29, 0, 59, 59), 'Europe/Berlin')).toBe('2026-03-29T01:59:59+01:00')
    expect(formatInZone(utc(2026, 3, 29, 1, 0, 0), 'Europe/Berlin')).toBe('2026-03-29T03:00:00+02:00')
  })

  it('follows Europe/Berlin back to standard time (25 October 2026)', () => {
    expect(formatInZone(utc(2026, 10, 25, 0, 59, 59), 'Europe/Berlin')).toBe('2026-10-25T02:59:59+02:00')
    expect(formatInZone(utc(2026, 10, 25, 1, 0, 0), 'Europe/Berlin')).toBe('2026-10-25T02:00:00+01:00')
  })

  it('keeps the sub-second part across a zone change', () => {
    expect(formatInZone(utc(2026, 3, 29, 1, 0, 0, 123_456), 'Europe/Berlin')).toBe(
      '2026-03-29T03:00:00.123456+02:00',
    )
  })

  // Before 1906 India kept Madras time, +05:21:10. RFC 3339 offsets have no seconds, but the
  // nearest minute is still the zone's offset; falling back to UTC writes a wall time 5 h 21 min off.
  it('writes a historical offset that has seconds to the minute, not as UTC', () => {
    expect(formatInZone(utc(1900, 6, 1), 'Asia/Kolkata')).toMatch(/^1900-06-01T05:21:\d\d\+05:21$/)
  })
})

describe('parseLocalTimestamp', () => {
  it('reads a wall time in Asia/Kolkata', () => {
    expect(parseLocalTimestamp('2026-11-21 09:00:00', 'Asia/Kolkata')).toBe(utc(2026, 11, 21, 3, 30))
    expect(parseLocalTimestamp('2026-11-21T09:00:00', 'Asia/Kolkata')).toBe(utc(2026, 11, 21, 3, 30))
  })

  it('reads a wall time in UTC and in a negative-offset zone', () => {
    expect(parseLocalTimestamp('2026-11-21 09:00:00', 'UTC')).toBe(utc(2026, 11, 21, 9))
    expect(parseLocalTimestamp('2026-01-15 08:30:00', 'America/St_Johns')).toBe(utc(2026, 1, 15, 12))
  })

  it('refuses text that is not a plain local wall time', () => {
    for (const text of [
      '2026-11-21 09:00:00+05:30',
      '2026-11-21T09:00:00Z',
      '2026-11-21 09:00:00.5',
      '2026-11-21 09:00',
      '2026-11-21',
      '21/11/2026 09:00:00',
      '',
    ]) {
      expect(parseLocalTimestamp(text, 'Asia/Kolkata'), text).toBeUndefined()
    }
  })

  it('refuses dates and times that do not exist, and years out of range', () => {
    for (const text of [
      '2026-02-30 09:00:00',
      '2026-13-01 09:00:00',
      '2023-02-29 09:00:00',
      '2026-11-21 24:00:00',
      '2026-11-21 09:60:00',
      // A device clock has no leap seconds.
      '2026-11-21 09:00:60',
      '1899-12-31 23:59:59',
      '2200-01-01 00:00:00',
    ]) {
      expect(parseLocalTimestamp(text, 'Asia/Kolkata'), text).toBeUndefined()
    }
    expect(parseLocalTimestamp('2024-02-29 09:00:00', 'Asia/Kolkata')).toBe(utc(2024, 2, 29, 3, 30))
  })

  it('reads Europe/Berlin wall times next to a change with the offset in force', () => {
    const berlin = (text: string) => parseLocalTimestamp(text, 'Europe/Berlin')
    expect(berlin('2026-03-29 01:59:59')).toBe(parseTimestamp('2026-03-29T01:59:59+01:00'))
    expect(berlin('2026-03-29 03:00:00')).toBe(parseTimestamp('2026-03-29T03:00:00+02:00'))
    expect(berlin('2026-10-25 01:59:59')).toBe(parseTimestamp('2026-10-25T01:59:59+02:00'))
    expect(berlin('2026-10-25 03:00:00')).toBe(parseTimestamp('2026-10-25T03:00:00+01:00'))
    expect(berlin('2026-07-01 12:00:00')).toBe(parseTimestamp('2026-07-01T12:00:00+02:00'))
    expect(berlin('2026-01-01 12:00:00')).toBe(parseTimestamp('2026-01-01T12:00:00+01:00'))
  })

  // 02:30 on 29 March 2026 never happened in Berlin. A device showing it has a clock that was not
  // moved yet (+01:00) or was moved early (+02:00); either reading is defensible, nothing else is.
  it('reads a wall time in the spring gap with one of the offsets either side of it', () => {
    const got = parseLocalTimestamp('2026-03-29 02:30:00', 'Europe/Berlin')
    expect([
      parseTimestamp('2026-03-29T02:30:00+01:00'),
      parseTimestamp('2026-03-29T02:30:00+02:00'),
    ]).toContain(got)
  })

  // 02:30 on 25 October 2026 happened twice in Berlin: at +02:00 and an hour later at +01:00.
  it('reads a wall time in the autumn overlap as one of its two instants', () => {
    const got = parseLocalTimestamp('2026-10-25 02:30:00', 'Europe/Berlin')
    expect([
      parseTimestamp('2026-10-25T02:30:00+02:00'),
      parseTimestamp('2026-10-25T02:30:00+01:00'),
    ]).toContain(got)
    expect(formatInZone(got as number, 'Europe/Berlin').slice(0, 19)).toBe('2026-10-25T02:30:00')
  })

  // See the formatInZone case above: Madras time, +05:21:10, until 1906.
  it('reads a wall time in a historical offset with seconds near that offset, not as UTC', () => {
    const got = parseLocalTimestamp('1900-06-01 12:00:00', 'Asia/Kolkata') as number
    const exact = utc(1900, 6, 1, 6, 38, 50)
    expect(Math.abs(got - exact)).toBeLessThan(MINUTE)
  })
})

describe('isValidTimeZone', () => {
  it('accepts IANA names and refuses others', () => {
    expect(isValidTimeZone('Asia/Kolkata')).toBe(true)
    expect(isValidTimeZone('Europe/Berlin')).toBe(true)
    expect(isValidTimeZone('UTC')).toBe(true)
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false)
    expect(isValidTimeZone('')).toBe(false)
  })
})

describe('round trips', () => {
  // Whole instants from the first to the last accepted UTC day, with any µs.
  const anyInstant = fc
    .tuple(
      fc.date({
        min: new Date('1900-01-02T00:00:00Z'),
        max: new Date('2199-12-30T23:59:59.999Z'),
        noInvalidDate: true,
      }),
      fc.integer({ min: 0, max: 999 }),
    )
    .map(([date, micros]) => date.getTime() * 1000 + micros)

  // Zones with half- and quarter-hour offsets, both hemispheres' DST, and a 30-minute DST shift.
  const zones = fc.constantFrom(
    'UTC',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Europe/Berlin',
    'America/New_York',
    'America/St_Johns',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'Pacific/Kiritimati',
  )

  it('parseTimestamp(formatTimestamp(µs, offset)) is µs for any offset', () => {
    fc.assert(
      fc.property(anyInstant, fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), (micros, offset) => {
        expect(parseTimestamp(formatTimestamp(micros, offset))).toBe(micros)
      }),
      { numRuns: 2000 },
    )
  })

  it('formatTimestamp(parseTimestamp(text)) keeps what the text said, to the µs', () => {
    expect(formatTimestamp(parseTimestamp('2026-11-21T09:00:00.120+05:30') as number, 330)).toBe(
      '2026-11-21T09:00:00.120+05:30',
    )
    expect(formatTimestamp(parseTimestamp('2026-11-21T03:30:00.123456789Z') as number)).toBe(
      '2026-11-21T03:30:00.123456Z',
    )
  })

  // Since 1972 every zone offset is a whole number of minutes (older local mean times are not).
  const modernInstant = fc
    .tuple(
      fc.date({
        min: new Date('1972-01-01T00:00:00Z'),
        max: new Date('2199-12-30T00:00:00Z'),
        noInvalidDate: true,
      }),
      fc.integer({ min: 0, max: 999 }),
    )
    .map(([date, micros]) => date.getTime() * 1000 + micros)

  it('parseTimestamp(formatInZone(µs, zone)) is µs', () => {
    fc.assert(
      fc.property(modernInstant, zones, (micros, zone) => {
        expect(parseTimestamp(formatInZone(micros, zone))).toBe(micros)
      }),
      { numRuns: 2000 },
    )
  })

  it('a wall time written by formatInZone reads back with parseLocalTimestamp to the same wall time', () => {
    fc.assert(
      fc.property(modernInstant, zones, (micros, zone) => {
        const whole = Math.floor(micros / SECOND) * SECOND
        const written = formatInZone(whole, zone)
        const wall = written.slice(0, 19)
        const read = parseLocalTimestamp(wall, zone)
        expect(read).toBeDefined()
        expect(formatInZone(read as number, zone).slice(0, 19)).toBe(wall)
        // The instant is the same unless the wall time happened twice (an overlap), where the other
        // reading is off by the size of the shift.
        if (read !== whole) {
          expect(formatInZone(read as number, zone)).not.toBe(written)
          expect(Math.abs((read as number) - whole)).toBeLessThanOrEqual(HOUR)
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('wall times around every Berlin change in 2026 read back exactly outside the overlap', () => {
    // Every minute of the two change days, written and read back.
    for (const day of [utc(2026, 3, 28, 12), utc(2026, 10, 24, 12)]) {
      for (let m = 0; m < 24 * 60; m++) {
        const instant = day + m * MINUTE
        const written = formatInZone(instant, 'Europe/Berlin')
        const read = parseLocalTimestamp(written.slice(0, 19), 'Europe/Berlin')
        const inOverlap = written.startsWith('2026-10-25T02:')
        if (!inOverlap) expect(read, written).toBe(instant)
        else expect(formatInZone(read as number, 'Europe/Berlin').slice(0, 19)).toBe(written.slice(0, 19))
      }
    }
  })
})
