import { pooledRandomBytes } from './random-pool.js'

// Crockford base32: no I, L, O or U, so ids survive being read aloud or retyped from a screen.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** Kinds of object and the prefix their ids carry, so that an id in a log says what it names. */
export const ID_PREFIXES = {
  tenant: 'ten',
  employee: 'emp',
  punch: 'pun',
  apiKey: 'key',
  consoleUser: 'usr',
  oauthApp: 'app',
  clientSecret: 'sec',
  accessToken: 'tok',
  auditEntry: 'aud',
  deadLetter: 'dlt',
  webhookEndpoint: 'whk',
  webhookSecret: 'whs',
  webhookEvent: 'msg',
  webhookDelivery: 'dlv',
  webhookAttempt: 'att',
  adminToken: 'adm',
  attendanceDay: 'day',
  attendancePolicy: 'pol',
  shiftAssignment: 'asg',
  holiday: 'hol',
  recomputeJob: 'job',
} as const

export type IdKind = keyof typeof ID_PREFIXES

/** The 26 characters after the prefix: a ULID in Crockford base32 (see {@link newId}). */
const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}'

/** Matches any id made by {@link newId}. */
export const ID_PATTERN = `^[a-z]{3}_${ULID_PATTERN}$`

/** Matches the ids of one kind, e.g. `^emp_…$`: for JSON Schema `pattern` and for RegExp. */
export function idPattern(kind: IdKind): string {
  return `^${ID_PREFIXES[kind]}_${ULID_PATTERN}$`
}

const ID_REGEXPS = new Map<IdKind, RegExp>()

/** True when `value` is an id of this kind: for checking ids that come back to us, as in cursors. */
export function isId(kind: IdKind, value: unknown): value is string {
  let pattern = ID_REGEXPS.get(kind)
  if (!pattern) {
    pattern = new RegExp(idPattern(kind))
    ID_REGEXPS.set(kind, pattern)
  }
  return typeof value === 'string' && pattern.test(value)
}

let lastTime = -1
const lastRandom = new Uint8Array(10)

/** The next 80 random bits: fresh in a new millisecond, else the previous plus one (ULID monotonicity). */
function nextRandom(now: number): Uint8Array {
  if (now > lastTime) {
    lastTime = now
    lastRandom.set(pooledRandomBytes(10))
    return lastRandom
  }
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    lastRandom[i] = ((lastRandom[i] as number) + 1) & 0xff
    if (lastRandom[i] !== 0) break
  }
  return lastRandom
}

/**
 * A ULID-shaped id (48-bit millisecond time + 80 random bits, 26 characters) behind a kind
 * prefix. Within a process, ids made later sort later, even in the same millisecond, so ordering by
 * id is ordering by creation.
 */
export function newId(kind: IdKind, now: number = Date.now()): string {
  let time = ''
  let t = Math.max(now, lastTime)
  const random = nextRandom(t)
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time
    t = Math.floor(t / 32)
  }
  let tail = ''
  // 80 bits → 16 base32 digits, five bits at a time.
  let acc = 0
  let bits = 0
  for (const byte of random) {
    acc = (acc << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      tail += ALPHABET[(acc >> bits) & 31]
    }
    acc &= (1 << bits) - 1
  }
  return `${ID_PREFIXES[kind]}_${time}${tail}`
}
