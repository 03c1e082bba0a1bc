/**
 * Employee search (docs/decisions/0048-employee-prefix-search.md): the start of the code, the name or the
 * email, ignoring the case of A–Z. Prefixes, not substrings, because a prefix is a range of an index on both
 * databases: the store compares `lower(column)` with [search, prefixEnd(search)), which migration 0006
 * indexes. Only ASCII letters are folded, here and in SQL alike: SQLite's lower() folds nothing else, and
 * migration 0006 gives these columns the "C" collation on PostgreSQL, whose lower() then does the
 * same; the same search finds the same employees on both.
 */

/** The search as the store compares it: trimmed, A–Z lowered; undefined when nothing is left. */
export function normalizeSearch(text: string | undefined): string | undefined {
  const trimmed = text?.trim() ?? ''
  return trimmed === '' ? undefined : trimmed.replace(/[A-Z]/g, (c) => c.toLowerCase())
}

/**
 * The least string above every string that starts with `prefix`, in code point order (which is
 * SQLite's BINARY and PostgreSQL's "C" order of UTF-8 text): its last code point, plus one.
 * Undefined for a prefix of U+10FFFF only, which has no such bound (the range is then open).
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix]
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number
    if (last < 0x10ffff) {
      // Surrogate code points cannot be encoded as UTF-8: step over them.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1
      return points.join('') + String.fromCodePoint(next)
    }
  }
  return undefined
}
