import { AppError } from './app-error.js'

/**
 * Cursors are base64url JSON: opaque to clients (docs/development/architecture.md, Paging), readable to us when debugging.
 * They hold a position and the filters of the listing they came from, never an offset. They are
 * not signed: a hand-made cursor can only move within the caller's own tenant's data.
 */
function encodeCursor(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

/** Decodes a cursor, handing its JSON to `read`, which returns undefined when the shape is wrong. */
export function decodeCursor<T>(text: string, read: (value: Record<string, unknown>) => T | undefined): T {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    value = undefined
  }
  const result =
    typeof value === 'object' && value !== null ? read(value as Record<string, unknown>) : undefined
  if (result === undefined) {
    throw new AppError('invalid_cursor', 'Pass back the nextCursor of the previous page unchanged.', {
      errors: [{ in: 'query', pointer: '#/cursor', message: 'is not a cursor from this listing' }],
    })
  }
  return result
}

/** Rejects a cursor whose filters differ from those given again in the query. */
export function assertSameFilter(name: string, inQuery: unknown, inCursor: unknown): void {
  if (inQuery !== undefined && inQuery !== inCursor) {
    throw new AppError(
      'invalid_cursor',
      `The cursor was made for a different ${name}: repeat the same filters, or start over without a cursor.`,
      {
        errors: [
          { in: 'query', pointer: `#/${name}`, message: 'differs from the filter the cursor was made for' },
        ],
      },
    )
  }
}

/** A page of a listing and the cursor of the page after it (null on the last page). */
interface Page<Row> {
  rows: Row[]
  nextCursor: string | null
}

/**
 * Reads one page of a keyset listing. `fetch` is asked for one row more than the page holds, which
 * tells whether there is a next page without a count query; the next cursor is `cursorOf` the
 * page's last row (its position, and the filters the listing was made with).
 */
export async function readPage<Row>(
  limit: number,
  fetch: (limit: number) => Promise<Row[]>,
  cursorOf: (last: Row) => object,
): Promise<Page<Row>> {
  const rows = await fetch(limit + 1)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { rows: page, nextCursor: rows.length > limit && last ? encodeCursor(cursorOf(last)) : null }
}

/**
 * The filters a listing goes on with: those its cursor was made for, once each one given again in
 * the query is found the same (see assertSameFilter), in the order the cursor holds them.
 */
export function resumeFilters<F extends object>(inQuery: F, inCursor: F): F {
  for (const name of Object.keys(inCursor) as (keyof F & string)[]) {
    assertSameFilter(name, inQuery[name], inCursor[name])
  }
  return inCursor
}
