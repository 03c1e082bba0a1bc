import { type TSchema, Type } from '@sinclair/typebox'
import { NullableString } from './schema-helpers.js'

/**
 * `limit` defaults to 50; outside 1..200 is a 400, never silently clamped
 * (docs/decisions/0008-cursor-paging.md).
 */
export const DEFAULT_PAGE_LIMIT = 50
export const MAX_PAGE_LIMIT = 200

export const LimitSchema = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_LIMIT,
  default: DEFAULT_PAGE_LIMIT,
  description: `Records per page, 1 to ${MAX_PAGE_LIMIT}.`,
})

export const CursorSchema = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'The `nextCursor` of the previous page, with the same filters. Opaque.',
})

/**
 * `{ data, nextCursor }`, the list shape (docs/development/architecture.md#paging). `nextCursor` is null on
 * the last page.
 */
export function PageSchema<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      data: Type.Array(item),
      nextCursor: NullableString({ description: 'Pass as `cursor` to get the next page; null at the end.' }),
    },
    { title, additionalProperties: false },
  )
}
