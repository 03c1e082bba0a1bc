import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'

/**
 * Every secret Hajri issues (docs/decisions/0015-secret-formats.md): a prefix naming its kind, CSPRNG
 * characters (over 128 bits), and a 6-character base62 CRC-32 of everything before it. The prefix lets secret
 * scanners recognise a leaked secret and tells us which table to look in; the checksum lets us refuse a
 * mistyped or made-up one before any database work. Only a SHA-256 of a secret is stored: the
 * secrets are random, so a slow password hash would add nothing.
 */
export interface SecretKind {
  prefix: string
  /** Base62 characters of CSPRNG output. */
  randomLength: number
}

/** `hjk_`: API keys. 30 × log2(62) ≈ 178 bits. */
export const API_KEY: SecretKind = { prefix: 'hjk_', randomLength: 30 }
/** `hjs_`: OAuth client secrets. ≈ 238 bits. */
export const CLIENT_SECRET: SecretKind = { prefix: 'hjs_', randomLength: 40 }
/** `hja_`: OAuth access tokens. ≈ 238 bits. */
export const ACCESS_TOKEN: SecretKind = { prefix: 'hja_', randomLength: 40 }

const CHECKSUM_LENGTH = 6
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 × 4: rejecting bytes above it keeps every character equally likely.
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

export function generateSecret(kind: SecretKind): string {
  const body = kind.prefix + randomBase62(kind.randomLength)
  return body + checksum(body)
}

/** Whether `value` has the shape and checksum of a secret of this kind we issued (not whether it exists). */
export function isWellFormedSecret(kind: SecretKind, value: string): boolean {
  if (value.length !== kind.prefix.length + kind.randomLength + CHECKSUM_LENGTH) return false
  if (!value.startsWith(kind.prefix) || !/^[0-9A-Za-z]+$/.test(value.slice(kind.prefix.length))) return false
  return checksum(value.slice(0, -CHECKSUM_LENGTH)) === value.slice(-CHECKSUM_LENGTH)
}

export function hashSecret(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

/** Compares a presented secret with a stored hash in constant time. */
export function secretMatches(value: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(value).digest()
  const stored = Buffer.from(storedHash, 'hex')
  return stored.length === presented.length && timingSafeEqual(presented, stored)
}

/** Enough of a secret to tell them apart in a list, far too little to guess the rest. */
export function displayPrefix(kind: SecretKind, value: string): string {
  return value.slice(0, kind.prefix.length + 6)
}
