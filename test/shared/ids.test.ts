import { describe, expect, it } from 'vitest'
import { ID_PATTERN, ID_PREFIXES, type IdKind, idPattern, isId, newId } from '../../shared/ids.js'

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** The millisecond time in the first 10 characters after the prefix, decoded independently. */
function timeOf(id: string): number {
  const encoded = id.slice(4, 14)
  let t = 0
  for (const ch of encoded) t = t * 32 + CROCKFORD.indexOf(ch)
  return t
}

const sortedCopy = (ids: readonly string[]) => [...ids].sort()

// The generator keeps module state (the last time and random part). Tests run in order in one
// module, so the first one here sees a fresh generator and later ones pass clocks beyond it.
describe('newId', () => {
  it('stamps the current time when no clock is given', () => {
    const before = Date.now()
    const id = newId('employee')
    const after = Date.now()
    expect(timeOf(id)).toBeGreaterThanOrEqual(before)
    expect(timeOf(id)).toBeLessThanOrEqual(after)
  })

  it('is the kind prefix, an underscore and 26 Crockford base32 characters', () => {
    const pattern = new RegExp(ID_PATTERN)
    for (const [kind, prefix] of Object.entries(ID_PREFIXES)) {
      const id = newId(kind as IdKind)
      expect(id).toMatch(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`))
      expect(id).toMatch(pattern)
      expect(id).toHaveLength(prefix.length + 1 + 26)
    }
  })

  it('has a distinct prefix for every kind', () => {
    const prefixes = Object.values(ID_PREFIXES)
    expect(new Set(prefixes).size).toBe(prefixes.length)
    expect(ID_PREFIXES).toMatchObject({ tenant: 'ten', employee: 'emp', punch: 'pun', apiKey: 'key' })
  })

  it('never uses the letters Crockford leaves out (I, L, O, U)', () => {
    const text = Array.from({ length: 2000 }, () => newId('punch').slice(4)).join('')
    expect(text).not.toMatch(/[ILOUa-z]/)
    // A 32-letter alphabet fully used: every allowed character turns up in 52 000 random ones.
    expect(new Set(text).size).toBe(32)
  })

  it('encodes the clock it is given in its first 10 characters', () => {
    const t = Date.now() + 60_000
    expect(timeOf(newId('punch', t))).toBe(t)
    expect(timeOf(newId('punch', t + 1))).toBe(t + 1)
  })

  it('sorts ids made later after earlier ones, across milliseconds', () => {
    const start = Date.now() + 120_000
    const ids: string[] = []
    for (let i = 0; i < 1000; i++) ids.push(newId('punch', start + i))
    expect(sortedCopy(ids)).toEqual(ids)
  })

  it('sorts ids made later after earlier ones within one millisecond', () => {
    const t = Date.now() + 180_000
    const ids = Array.from({ length: 10_000 }, () => newId('punch', t))
    expect(ids.every((id) => timeOf(id) === t)).toBe(true)
    expect(sortedCopy(ids)).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('still sorts later when the clock passed in goes backwards', () => {
    const t = Date.now() + 240_000
    const first = newId('employee', t)
    const second = newId('employee', t - 5_000)
    const third = newId('employee', 0)
    expect(second > first).toBe(true)
    expect(third > second).toBe(true)
    // It keeps the latest time seen rather than going back in time.
    expect(timeOf(second)).toBe(t)
    expect(timeOf(third)).toBe(t)
    const later = newId('employee', t + 1)
    expect(later > third).toBe(true)
    expect(timeOf(later)).toBe(t + 1)
  })

  it('starts a new millisecond with fresh randomness, not a counter', () => {
    const start = Date.now() + 300_000
    const tails = Array.from({ length: 500 }, (_, i) => newId('punch', start + i).slice(14))
    // A counter restarting at zero each millisecond would repeat; 80 random bits do not.
    expect(new Set(tails).size).toBe(tails.length)
  })

  it('makes no duplicates over many ids', () => {
    const ids = new Set<string>()
    for (let i = 0; i < 200_000; i++) ids.add(newId('punch'))
    expect(ids.size).toBe(200_000)
  })

  it('sorts in creation order bytewise too, as a database does', () => {
    // Databases sort ids bytewise (C collation); JavaScript sorts by UTF-16 code unit. With an
    // ASCII alphabet in ascending code order the two agree, so ids sort the same everywhere.
    expect([...CROCKFORD].sort().join('')).toBe(CROCKFORD)
    const t = Date.now() + 360_000
    const ids = Array.from({ length: 300 }, (_, i) => newId('punch', t + (i % 3 === 0 ? i : 0)))
    const bytewise = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    expect(bytewise).toEqual(ids)
  })
})

describe('idPattern and isId', () => {
  it('match the ids of their kind only', () => {
    const kinds = Object.keys(ID_PREFIXES) as IdKind[]
    for (const kind of kinds) {
      const id = newId(kind)
      expect(id).toMatch(new RegExp(idPattern(kind)))
      expect(isId(kind, id)).toBe(true)
      for (const other of kinds) if (other !== kind) expect(isId(other, id)).toBe(false)
    }
  })

  it('is the pattern the OpenAPI document publishes', () => {
    expect(idPattern('employee')).toBe('^emp_[0-9A-HJKMNP-TV-Z]{26}$')
    expect(ID_PATTERN).toBe('^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$')
  })

  it('refuses what is not an id: other types, lower case, a letter Crockford leaves out, a wrong length', () => {
    const id = newId('punch')
    for (const value of [
      undefined,
      null,
      42,
      [id],
      { id },
      id.toLowerCase(),
      `${id.slice(0, -1)}U`,
      `${id}0`,
      ` ${id}`,
    ])
      expect(isId('punch', value)).toBe(false)
  })
})
