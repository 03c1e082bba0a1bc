import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  API_KEY_PATTERN,
  API_KEY_PREFIX,
  apiKeyDisplayPrefix,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
} from '../../../../cloud/features/api-keys/api-key-format.js'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const CHECKSUM_LENGTH = 6

describe('generateApiKey', () => {
  it('is hjk_ and 36 base62 characters', () => {
    expect(API_KEY_PREFIX).toBe('hjk_')
    for (let i = 0; i < 100; i++) {
      const key = generateApiKey()
      expect(key).toMatch(/^hjk_[0-9A-Za-z]{36}$/)
      expect(key).toMatch(API_KEY_PATTERN)
    }
  })

  it('carries at least 128 bits of randomness before its checksum', () => {
    const randomChars = generateApiKey().length - API_KEY_PREFIX.length - CHECKSUM_LENGTH
    expect(randomChars * Math.log2(62)).toBeGreaterThanOrEqual(128)
  })

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 20_000 }, () => generateApiKey()))
    expect(keys.size).toBe(20_000)
  })

  it('draws every base62 character at every random position', () => {
    // 62 characters at each of 30 positions in 3000 keys (about 48 draws each): a character that
    // never appears at some position would mean a biased or stuck generator.
    const keys = Array.from({ length: 3000 }, () => generateApiKey())
    for (let position = 4; position < 4 + 30; position++) {
      const seen = new Set(keys.map((k) => k[position]))
      expect(seen.size, `position ${position}`).toBe(62)
    }
  })
})

describe('isWellFormedApiKey', () => {
  const keys = Array.from({ length: 20 }, () => generateApiKey())

  it('accepts every key it generated', () => {
    for (const key of Array.from({ length: 1000 }, () => generateApiKey())) {
      expect(isWellFormedApiKey(key)).toBe(true)
    }
  })

  it('refuses a key with any one character changed to any other', () => {
    // Every position (prefix, random part, checksum) and every replacement: CRC-32 catches every
    // single-byte change, and the checksum's own digits map one-to-one to its value.
    const alphabet = `${BASE62}_-`
    for (const key of keys.slice(0, 5)) {
      for (let i = 0; i < key.length; i++) {
        for (const ch of alphabet) {
          if (ch === key[i]) continue
          const changed = key.slice(0, i) + ch + key.slice(i + 1)
          expect(isWellFormedApiKey(changed), changed).toBe(false)
        }
      }
    }
  })

  it('refuses a key with two neighbouring characters swapped', () => {
    for (const key of keys) {
      for (let i = 0; i < key.length - 1; i++) {
        if (key[i] === key[i + 1]) continue
        const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2)
        expect(isWellFormedApiKey(swapped), swapped).toBe(false)
      }
    }
  })

  it('refuses a wrong or missing prefix', () => {
    for (const key of keys) {
      const rest = key.slice(API_KEY_PREFIX.length)
      expect(isWellFormedApiKey(`HJK_${rest}`)).toBe(false)
      expect(isWellFormedApiKey(`hjc_${rest}`)).toBe(false)
      expect(isWellFormedApiKey(`hjk-${rest}`)).toBe(false)
      expect(isWellFormedApiKey(rest)).toBe(false)
    }
  })

  it('refuses a truncated or extended key', () => {
    for (const key of keys) {
      expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false)
      expect(isWellFormedApiKey(key.slice(1))).toBe(false)
      expect(isWellFormedApiKey(key.slice(0, API_KEY_PREFIX.length + 30))).toBe(false)
      expect(isWellFormedApiKey(`${key}0`)).toBe(false)
      expect(isWellFormedApiKey(`${key} `)).toBe(false)
      expect(isWellFormedApiKey(` ${key}`)).toBe(false)
      expect(isWellFormedApiKey(`${key}\n`)).toBe(false)
    }
  })

  it('refuses made-up keys of the right shape', () => {
    // The right shape with the wrong checksum: only about 1 in 2^32 guesses could pass.
    let accepted = 0
    for (let i = 0; i < 5000; i++) {
      const made = `hjk_${Array.from({ length: 36 }, () => BASE62[Math.floor(Math.random() * 62)]).join('')}`
      if (isWellFormedApiKey(made)) accepted++
    }
    expect(accepted).toBe(0)
    expect(isWellFormedApiKey(`hjk_${'0'.repeat(36)}`)).toBe(false)
    expect(isWellFormedApiKey('')).toBe(false)
  })
})

describe('hashApiKey', () => {
  it('is the SHA-256 of the key, in lowercase hex', () => {
    // FIPS 180-2 test vector.
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    const key = generateApiKey()
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key, 'utf8').digest('hex'))
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/)
  })

  it('differs for keys that differ', () => {
    const a = generateApiKey()
    const b = generateApiKey()
    expect(hashApiKey(a)).not.toBe(hashApiKey(b))
    expect(hashApiKey(a)).not.toContain(a.slice(API_KEY_PREFIX.length))
  })
})

describe('apiKeyDisplayPrefix', () => {
  it('is the start of the key: the kind prefix and a few characters', () => {
    const key = generateApiKey()
    const shown = apiKeyDisplayPrefix(key)
    expect(key.startsWith(shown)).toBe(true)
    expect(shown.startsWith(API_KEY_PREFIX)).toBe(true)
    expect(shown.length).toBeGreaterThan(API_KEY_PREFIX.length)
  })

  it('leaves at least 128 random bits unshown, and never reaches the checksum', () => {
    const key = generateApiKey()
    const shown = apiKeyDisplayPrefix(key)
    const hiddenRandomChars = key.length - CHECKSUM_LENGTH - shown.length
    expect(hiddenRandomChars * Math.log2(62)).toBeGreaterThanOrEqual(128)
  })

  it('tells keys apart in a list', () => {
    const shown = new Set(Array.from({ length: 1000 }, () => apiKeyDisplayPrefix(generateApiKey())))
    // 6 base62 characters: 1000 keys collide on a prefix with probability about 1 in 100 000.
    expect(shown.size).toBeGreaterThanOrEqual(999)
  })
})
