import { beforeAll, expect, it } from 'vitest'
import type { Employee } from '../../../../shared/employee.js'
import { bearer, describeEachDatabase, employee } from '../../../support/cloud-harness.js'

const TOTAL = 100_000
type Page = { data: Employee[]; nextCursor: string | null }

const code = (i: number) => `P${String(i).padStart(6, '0')}`

/**
 * Paging correctness (docs/decisions/0009-incremental-sync.md): a full listing of 100,000 employees, 200 at a
 * time, returns each exactly once while they are being updated; an updatedSince sync never misses a change
 * made while it runs. Updates run concurrently with the page reads, not only between them.
 */
describeEachDatabase('paging under concurrent updates', (cloud) => {
  let tenantId: string
  let key: string
  let round = 0

  beforeAll(async () => {
    tenantId = await cloud.createTenant()
    key = await cloud.createApiKey(tenantId, ['employees:read'])
    for (let start = 0; start < TOTAL; start += 10_000) {
      await cloud.upsertEmployees(
        tenantId,
        Array.from({ length: 10_000 }, (_, i) => employee(code(start + i))),
      )
    }
  }, 300_000)

  const page = async (query: string): Promise<Page> => {
    const res = await cloud.app.inject({
      method: 'GET',
      url: `/api/public/v1/employees?${query}`,
      headers: bearer(key),
    })
    expect(res.statusCode).toBe(200)
    return res.json()
  }

  /** Renames `count` employees spread over the whole range, each to a name unique to this call. */
  const updateSome = async (count: number, offset: number): Promise<string[]> => {
    round++
    const changed = Array.from({ length: count }, (_, i) => code((offset + i * 7919) % TOTAL))
    await cloud.upsertEmployees(
      tenantId,
      changed.map((c) => employee(c, { name: `renamed ${round}` })),
    )
    return changed
  }

  it('returns every employee exactly once in a full listing, while employees are updated', async () => {
    const counts = new Map<string, number>()
    let cursor: string | null = null
    let pages = 0
    do {
      // The next page and a batch of updates race each other.
      const [result]: [Page, string[]] = await Promise.all([
        page(`limit=200${cursor ? `&cursor=${cursor}` : ''}`),
        updateSome(25, pages * 131),
      ])
      for (const e of result.data) counts.set(e.id, (counts.get(e.id) ?? 0) + 1)
      cursor = result.nextCursor
      pages++
    } while (cursor)
    expect(pages).toBe(TOTAL / 200)
    expect(counts.size).toBe(TOTAL)
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
  }, 300_000)

  it('never misses a change made during an updatedSince sync: a changed record comes again with its new version', async () => {
    const lastSeen = new Map<string, Employee>()
    const changedDuringSync = new Map<string, string>()
    let newest: Employee | undefined
    let cursor: string | null = null
    let pages = 0
    do {
      const query: string = cursor
        ? `limit=200&cursor=${cursor}`
        : 'limit=200&updatedSince=2000-01-01T00:00:00Z'
      // Change records both behind and ahead of the reader while it pages, then stop before the end
      // (a change after the last page belongs to the next sync).
      const updating = pages < 400 ? updateSome(10, pages * 53) : Promise.resolve([])
      const [result, changed]: [Page, string[]] = await Promise.all([page(query), updating])
      for (const c of changed) changedDuringSync.set(c, `renamed ${round}`)
      for (const e of result.data) lastSeen.set(e.employeeCode, e)
      newest = result.data.at(-1) ?? newest
      cursor = result.nextCursor
      pages++
    } while (cursor)

    expect(lastSeen.size).toBe(TOTAL)
    const missed = [...changedDuringSync].filter(([c, name]) => lastSeen.get(c)?.name !== name)
    expect(missed).toEqual([])
    expect(changedDuringSync.size).toBeGreaterThan(1000)

    // The next sync starts from the last updatedAt seen (inclusive): that record again, then only
    // what changed since.
    if (!newest) throw new Error('sync returned nothing')
    const since = newest.updatedAt
    const later = await updateSome(3, 17)
    const next = await page(`limit=200&updatedSince=${encodeURIComponent(since)}`)
    expect(next.data.map((e) => e.employeeCode)).toEqual([newest.employeeCode, ...later])
  }, 300_000)
})
