import { type TSchema, Type } from '@sinclair/typebox'
import { NullableString } from './schema-helpers.js'

/**
 * `limit` defaults to 50; outside 1..200 is a 400, never silently clamped
 * (docs/decisions/0008-cursor-paging.md).
 */
export const DEFAULT_PAGE_LIMIT = 50
export const MAX_PAGE_LIMIT = 200

const LimitSchema = Type.Integer({
  minimum: 1,
  maximum: MAX_PAGE_LIMIT,
  default: DEFAULT_PAGE_LIMIT,
  description: `Records per page, 1 to ${MAX_PAGE_LIMIT}.`,
})

const CursorSchema = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'The `nextCursor` of the previous page, with the same filters. Opaque.',
})

/** The query fields of every paged list: `limit` and `cursor`. */
export const PageQueryFields = {
  limit: Type.Optional(LimitSchema),
  cursor: Type.Optional(CursorSchema),
}

/**
 * `from` (inclusive) and `to` (exclusive) over the time a list is ordered by: `timeRangeFields('Occurred')`
 * (docs/development/architecture.md#time).
 */
export function timeRangeFields(happened: string) {
  return {
    from: Type.Optional(
      Type.String({ format: 'date-time', description: `${happened} at or after (inclusive).` }),
    ),
    to: Type.Optional(Type.String({ format: 'date-time', description: `${happened} before (exclusive).` })),
  }
}

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

/**
 * The list shape for what a tenant has few of (API keys, OAuth apps): one page holds them all, so
 * `nextCursor` is always null and the list takes no paging query.
 */
export function SinglePageSchema<T extends TSchema>(item: T, title: string, why: string) {
  return Type.Object(
    { data: Type.Array(item), nextCursor: Type.Null({ description: `${why}: one page holds them all.` }) },
    { title, additionalProperties: false },
  )
}
