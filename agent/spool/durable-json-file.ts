import { open, readFile, rename, rm } from 'node:fs/promises'
import type { Adapter } from 'lowdb'
import { readSmallFile } from './small-files.js'

/** A chunk file that could not be read back as what was written. */
export class CorruptFileError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`)
    this.name = 'CorruptFileError'
  }
}

/**
 * A lowdb adapter that survives power cuts (DESIGN.md §5): the JSON is written to a temporary file,
 * fsynced, and renamed over the target, so a reader sees the old file or the new one, never half of
 * one. The rename is durable once the directory is fsynced, which the caller does (once for every
 * file of a group commit, see syncDirectory).
 */
export class DurableJsonFile<T> implements Adapter<T> {
  /** Bytes the last write put on disk. */
  writtenBytes = 0

  /** `expectedBytes`: the file's size as last known, which lets a read take one system call. */
  constructor(
    readonly path: string,
    private readonly expectedBytes?: number,
  ) {}

  async read(): Promise<T | null> {
    let text: string
    try {
      text =
        this.expectedBytes === undefined
          ? await readFile(this.path, 'utf8')
          : await readSmallFile(this.path, this.expectedBytes)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    try {
      return JSON.parse(text) as T
    } catch (err) {
      throw new CorruptFileError(this.path, `not JSON (${(err as Error).message})`)
    }
  }

  async write(data: T): Promise<void> {
    const temporary = `${this.path}.tmp`
    const file = await open(temporary, 'w')
    try {
      const bytes = Buffer.from(JSON.stringify(data))
      await file.writeFile(bytes)
      await file.sync()
      this.writtenBytes = bytes.length
    } finally {
      await file.close()
    }
    try {
      await rename(temporary, this.path)
    } catch (err) {
      await rm(temporary, { force: true })
      throw err
    }
  }
}

/** Makes the renames and removals in a directory durable. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
