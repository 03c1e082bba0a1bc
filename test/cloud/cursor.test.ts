import { describe, expect, it } from 'vitest'
import { decodeCursor, readPage, resumeFilters } from '../../cloud/cursor.js'

const rows = Array.from({ length: 5 }, (_, i) => ({ id: `r${i}` }))
const fetchFrom = (asked: number[]) => async (limit: number) => {
  asked.push(limit)
  return rows.slice(0, limit)
}

describe('readPage', () => {
  it('asks for one row more than the page, and makes a cursor from the last row shown', async () => {
    const asked: number[] = []
    const page = await readPage(2, fetchFrom(asked), (last) => ({ k: last.id }))
    expect(asked).toEqual([3])
    expect(page.rows).toEqual([{ id: 'r0' }, { id: 'r1' }])
    expect(page.nextCursor).toBe(Buffer.from('{"k":"r1"}').toString('base64url'))
    expect(decodeCursor(page.nextCursor as string, (v) => v.k)).toBe('r1')
  })

  it('gives no cursor on the last page, full or not', async () => {
    expect(await readPage(5, fetchFrom([]), () => ({}))).toEqual({ rows, nextCursor: null })
    expect((await readPage(9, fetchFrom([]), () => ({}))).nextCursor).toBeNull()
  })
})

describe('resumeFilters', () => {
  it('goes on with the cursor’s filters when the query repeats them or leaves them out', () => {
    const inCursor = { status: 'active', from: 5 }
    expect(resumeFilters<{ status?: string; from: number }>({ from: 5 }, inCursor)).toBe(inCursor)
  })

  it('refuses a query whose filter differs, naming it', () => {
    expect(() => resumeFilters({ status: 'inactive', from: 5 }, { status: 'active', from: 5 })).toThrow(
      expect.objectContaining({
        code: 'invalid_cursor',
        message: expect.stringContaining('different status'),
      }),
    )
  })
})
