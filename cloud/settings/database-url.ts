import { resolve } from 'node:path'

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
