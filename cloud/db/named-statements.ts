import { createHash } from 'node:crypto'
import type pg from 'pg'

/**
 * The start of a statement's text that asks for it to be prepared once per PostgreSQL connection
 * (a named statement, PostgreSQL "Extended Query" protocol) rather than parsed and planned on every
 * run: for the few fixed-shape statements every request runs (a credential's lookup, a new punch).
 * Only for statements whose best plan does not depend on their parameters' values: a statement with
 * an array whose length varies gets a generic plan for one length, slow for another. To SQLite it is
 * a comment.
 */
export const PREPARED_MARK = '/* prepared */ '

/** Names by text: the marked statements are a fixed set, so this stays small. */
const names = new Map<string, string>()

function nameOf(text: string): string {
  let name = names.get(text)
  if (!name) {
    name = `hajri_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`
    names.set(text, name)
  }
  return name
}

type Query = (...args: unknown[]) => unknown

/**
 * Makes a connection run marked statements as named ones. Kysely passes `(text, values)`; pg
 * prepares a named statement on its first run on a connection and reuses it after
 * (pg's `parsedStatements`), so each connection parses it once.
 */
export function nameMarkedStatements(client: pg.PoolClient): void {
  const target = client as unknown as { query: Query }
  const query = target.query.bind(client)
  target.query = (...args: unknown[]) => {
    const [text, values] = args
    if (args.length <= 2 && typeof text === 'string' && text.startsWith(PREPARED_MARK)) {
      return query({ name: nameOf(text), text, values })
    }
    return query(...args)
  }
}
