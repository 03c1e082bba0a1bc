import { resolve } from 'node:path'

/** HAJRI_DATABASE_URL when unset: a file beside the working directory, so a first run needs nothing. */
export const DEFAULT_DATABASE_URL = 'sqlite:./data/hajri.db'

/** Connections in the PostgreSQL pool of one instance (HAJRI_DATABASE_POOL_SIZE); SQLite has one. */
export const DEFAULT_DATABASE_POOL_SIZE = 10

export type DatabaseTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string }

/**
 * `sqlite:./data/hajri.db` (relative to the working directory), `sqlite:/abs/path.db`,
 * `sqlite::memory:`, or a `postgres://` / `postgresql://` URL handed to pg as it is.
 */
export function parseDatabaseUrl(url: string, cwd: string = process.cwd()): DatabaseTarget {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    if (!URL.canParse(url)) throw new Error(`HAJRI_DATABASE_URL: not a valid URL: "${url}"`)
    return { dialect: 'postgres', url }
  }
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length)
    if (path.startsWith('//')) path = path.slice(2)
    if (path === '') throw new Error(`HAJRI_DATABASE_URL: no file in "${url}"`)
    return { dialect: 'sqlite', path: path === ':memory:' ? path : resolve(cwd, path) }
  }
  throw new Error(`HAJRI_DATABASE_URL: must start with sqlite: or postgres://, got "${url}"`)
}
