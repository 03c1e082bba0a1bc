import { lstat, readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

/** One entry of a directory tree, as a byte-for-byte comparison needs it. */
export interface SnapshotEntry {
  path: string
  mode: number
  mtimeMs: number
  /** A file's bytes (base64); undefined for a directory. */
  content?: string
}

/**
 * Everything under `dir`: every path, its mode and modification time, and every file's bytes,
 * sorted by path; so that two snapshots are equal only if nothing in the tree was created,
 * removed, renamed, written or touched in between.
 */
export async function snapshotTree(dir: string): Promise<SnapshotEntry[]> {
  const entries: SnapshotEntry[] = []
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const path = join(dir, name)
    const info = await lstat(path)
    entries.push({
      path: name,
      mode: info.mode,
      mtimeMs: info.mtimeMs,
      ...(info.isFile() && { content: (await readFile(path)).toString('base64') }),
    })
  }
  const root = await lstat(dir)
  entries.push({ path: '.', mode: root.mode, mtimeMs: root.mtimeMs })
  return entries
}
