import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatByteSize, parseByteSize } from '../../../agent/config/byte-size.js'

describe('parseByteSize', () => {
  it('reads binary units as powers of 1024 and decimal units as powers of 1000', () => {
    const cases: [string, number][] = [
      ['1B', 1],
      ['1KiB', 1024],
      ['1KB', 1000],
      ['3MiB', 3 * 1024 ** 2],
      ['500MB', 500 * 1000 ** 2],
      ['2GiB', 2 * 1024 ** 3],
      ['2GB', 2 * 1000 ** 3],
      ['1TiB', 1024 ** 4],
      ['4TB', 4 * 1000 ** 4],
      ['1048576', 1048576],
      ['2 GiB', 2 * 1024 ** 3],
    ]
    for (const [text, bytes] of cases) expect(parseByteSize(text), text).toEqual({ ok: true, bytes })
  })

  it('computes fractions exactly, and refuses a fraction of a byte', () => {
    expect(parseByteSize('0.1KB')).toEqual({ ok: true, bytes: 100 })
    expect(parseByteSize('1.5GiB')).toEqual({ ok: true, bytes: 1610612736 })
    expect(parseByteSize('0.001KiB')).toEqual({ ok: false, message: 'is not a whole number of bytes' })
    expect(parseByteSize('1.5B')).toEqual({ ok: false, message: 'is not a whole number of bytes' })
  })

  it('takes a number as bytes', () => {
    expect(parseByteSize(5_000_000)).toEqual({ ok: true, bytes: 5_000_000 })
    expect(parseByteSize(1.5).ok).toBe(false)
    expect(parseByteSize(Number.POSITIVE_INFINITY).ok).toBe(false)
  })

  it('refuses unknown or lower-case units, and sizes a number cannot hold exactly', () => {
    for (const text of ['2gib', '2 gigs', '2Gb', 'GiB', '-1MB', ''])
      expect(parseByteSize(text).ok, text).toBe(false)
    expect(parseByteSize('9000TiB')).toEqual({ ok: false, message: 'is too large' })
  })

  it('agrees with plain arithmetic for whole numbers of every unit', () => {
    const units: [string, number][] = [
      ['B', 1],
      ['KB', 1e3],
      ['MB', 1e6],
      ['GB', 1e9],
      ['KiB', 1024],
      ['MiB', 1024 ** 2],
      ['GiB', 1024 ** 3],
    ]
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom(...units), (n, [unit, size]) => {
        expect(parseByteSize(`${n}${unit}`)).toEqual({ ok: true, bytes: n * size })
      }),
    )
  })
})

describe('formatByteSize', () => {
  it('writes binary units for summaries', () => {
    expect(formatByteSize(2 * 1024 ** 3)).toBe('2 GiB')
    expect(formatByteSize(500_000_000)).toBe('476.8 MiB')
    expect(formatByteSize(512)).toBe('512 bytes')
  })
})
