/**
 * The browser tests drive the console as built by `npm run build` (dist/console), which CI has from
 * `npm ci`. When that build is missing, or older than a console source file (a developer changed the
 * console and ran the tests), it is built again first with Vite's JS API and the same config, so a
 * test never passes or fails on a stale build.
 */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultConsoleRoot } from '../../../../cloud/plugins/static-console.js'

const SOURCE = fileURLToPath(new URL('../../../../cloud/console/', import.meta.url))
/** Shared code the console imports types from; a change there can change its build. */
const SHARED = fileURLToPath(new URL('../../../../shared/', import.meta.url))

async function newestChange(dir: string): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue
    newest = Math.max(newest, (await stat(join(entry.parentPath, entry.name))).mtimeMs)
  }
  return newest
}

async function builtAt(root: string): Promise<number | undefined> {
  try {
    return (await stat(join(root, 'index.html'))).mtimeMs
  } catch {
    return undefined
  }
}

/** Where the console build is, once it is there and up to date. */
export async function ensureConsoleBuilt(): Promise<string> {
  const root = defaultConsoleRoot()
  const built = await builtAt(root)
  const sources = Math.max(await newestChange(SOURCE), await newestChange(SHARED))
  if (built === undefined || built < sources) {
    const { build } = await import('vite')
    // Vitest sets NODE_ENV=test, which would give React's development build; npm run build gives production.
    const nodeEnv = process.env.NODE_ENV
    process.env.NODE_ENV = 'production'
    try {
      await build({ configFile: join(SOURCE, 'vite.config.ts'), mode: 'production', logLevel: 'warn' })
    } finally {
      if (nodeEnv === undefined) delete process.env.NODE_ENV
      else process.env.NODE_ENV = nodeEnv
    }
  }
  return root
}
