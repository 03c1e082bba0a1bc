import { AppError } from './app-error.js'

/**
 * Cursors are base64url JSON: opaque to clients (DESIGN.md §2), readable to us when debugging.
 * They hold a position and the filters of the listing they came from, never an offset. They are
 * not signed: a hand-made cursor can only move within the caller's own tenant's data.
 */
export function encodeCursor(value: object): string {
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
