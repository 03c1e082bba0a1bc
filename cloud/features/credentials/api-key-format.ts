import { createHash, randomBytes } from 'node:crypto'
import { crc32 } from 'node:zlib'

/**
 * API key format (DESIGN.md §3): `hjk_` + 30 base62 characters of CSPRNG output (178 bits) + a
 * 6-character base62 CRC-32 of everything before it. The prefix lets secret scanners recognise a
 * leaked key; the checksum lets us refuse a mistyped or made-up key without a database lookup.
 */
export const API_KEY_PREFIX = 'hjk_'
const RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
export const API_KEY_PATTERN = /^hjk_[0-9A-Za-z]{36}$/

function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

function checksum(body: string): string {
  let n = crc32(body)
  let out = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out
    n = Math.floor(n / 62)
  }
  return out
}

export function generateApiKey(): string {
  const body = API_KEY_PREFIX + randomBase62(RANDOM_LENGTH)
  return body + checksum(body)
}

/** Whether `key` has the shape and checksum of a key we issued (not whether it exists). */
export function isWellFormedApiKey(key: string): boolean {
  if (!API_KEY_PATTERN.test(key)) return false
  const body = key.slice(0, -CHECKSUM_LENGTH)
  return checksum(body) === key.slice(-CHECKSUM_LENGTH)
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** Enough of the key to tell keys apart in a list, far too little to guess the rest. */
export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6)
}
