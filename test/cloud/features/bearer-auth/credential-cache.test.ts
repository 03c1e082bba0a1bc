import { describe, expect, it } from 'vitest'
import { CredentialCache } from '../../../../cloud/features/bearer-auth/credential-cache.js'

describe('CredentialCache', () => {
  it('answers a secret it was given until its time is up, then forgets it', () => {
    let now = 1_000
    const cache = new CredentialCache<string>({ ttlMs: 500, clock: () => now })
    cache.set('hjk_secret', 'context')
    expect(cache.get('hjk_secret')).toBe('context')
    expect(cache.get('hjk_other')).toBeUndefined()
    now += 499
    expect(cache.get('hjk_secret')).toBe('context')
    now += 1
    expect(cache.get('hjk_secret')).toBeUndefined()
    expect(cache.size).toBe(0)
  })

  it('keeps at most its limit, dropping the entry looked up longest ago', () => {
    const cache = new CredentialCache<number>({ maxEntries: 2 })
    cache.set('a', 1)
    cache.set('b', 2)
    cache.set('a', 1) // a is now the newest
    cache.set('c', 3)
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3])
    expect(cache.size).toBe(2)
  })

  it('never keeps an entry past the time it is given (a credential expiring sooner than its time)', () => {
    let now = 1_000
    const cache = new CredentialCache<string>({ ttlMs: 500, clock: () => now })
    cache.set('hjk_secret', 'context', 1_200)
    now += 199
    expect(cache.get('hjk_secret')).toBe('context')
    now += 1
    expect(cache.get('hjk_secret')).toBeUndefined()
  })

  it('forgets everything on clear', () => {
    const cache = new CredentialCache<number>()
    cache.set('a', 1)
    cache.set('b', 2)
    cache.clear()
    expect([cache.get('a'), cache.get('b'), cache.size]).toEqual([undefined, undefined, 0])
  })

  it('forgets a secret on delete', () => {
    const cache = new CredentialCache<number>()
    cache.set('a', 1)
    cache.delete('a')
    expect(cache.get('a')).toBeUndefined()
  })

  it('does not keep the secret itself', () => {
    const cache = new CredentialCache<number>()
    const secret = 'hjk_live_0123456789abcdefghijklmnopqrstuvwxyz'
    cache.set(secret, 1)
    const keys = [...(cache as unknown as { entries: Map<string, unknown> }).entries.keys()]
    expect(keys).toHaveLength(1)
    expect(keys[0]).not.toContain(secret)
    expect(keys[0]).toMatch(/^[0-9a-f]{64}$/)
  })
})
