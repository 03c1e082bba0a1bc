import { describe, expect, it } from 'vitest'
import { parseDuration } from '../../shared/duration.js'

describe('parseDuration', () => {
  it('reads each unit into seconds', () => {
    expect(parseDuration('45s')).toBe(45)
    expect(parseDuration('30m')).toBe(1_800)
    expect(parseDuration('12h')).toBe(43_200)
    expect(parseDuration('90d')).toBe(7_776_000)
    expect(parseDuration('2w')).toBe(1_209_600)
  })

  it('counts a year as 365 days', () => {
    expect(parseDuration('1y')).toBe(365 * 86_400)
    expect(parseDuration('2y')).toBe(2 * 365 * 86_400)
  })

  it('reads a bare number as seconds', () => {
    expect(parseDuration('3600')).toBe(3_600)
    expect(parseDuration('0')).toBe(0)
    expect(parseDuration('007')).toBe(7)
  })

  it('ignores surrounding whitespace', () => {
    expect(parseDuration(' 90d ')).toBe(7_776_000)
    expect(parseDuration('\t12h\n')).toBe(43_200)
  })

  it('accepts up to 9 digits', () => {
    expect(parseDuration('999999999')).toBe(999_999_999)
    expect(parseDuration('999999999y')).toBe(999_999_999 * 31_536_000)
    expect(parseDuration('1000000000')).toBeUndefined()
  })

  it('refuses anything else', () => {
    for (const text of [
      '',
      ' ',
      'd',
      '90 d',
      '90D',
      '10M',
      '1.5h',
      '-1',
      '+1',
      '1h30m',
      '90days',
      '1e3',
      'P90D',
      '0x10',
      '９０d',
    ]) {
      expect(parseDuration(text), JSON.stringify(text)).toBeUndefined()
    }
  })
})
