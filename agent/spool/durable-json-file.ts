import fs from 'node:fs'
import { readFile, rename, rm } from 'node:fs/promises'
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
 * A lowdb adapter that survives power cuts (docs/decisions/0024-ack-after-fsync.md): the JSON is written to a
 * temporary file, fsynced, and renamed over the target, so a reader sees the old file or the new one, never
 * half of one. The rename is durable once the directory is fsynced, which the caller does (once for every
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
    const bytes = Buffer.from(JSON.stringify(data))
    await writeSynced(temporary, bytes)
    this.writtenBytes = bytes.length
    try {
      await rename(temporary, this.path)
    } catch (err) {
      await rm(temporary, { force: true })
      throw err
    }
  }
}

/**
 * Creates `path` with `bytes` and fdatasyncs it: its data and size are on disk when this resolves
 * (its name is not, until the directory is synced). On Node's callback API rather than
 * fs/promises' FileHandle: a commit writes several of these, each once per group of punches, and
 * measured here the FileHandle's promises cost about a third more CPU per file (see also
 * small-files.ts).
 */
function writeSynced(path: string, bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(path, 'w', (openError, fd) => {
      if (openError) return reject(openError)
      const finish = (error: Error | null) =>
        fs.close(fd, (closeError) => (error || closeError ? reject(error ?? closeError) : resolve()))
      const writeFrom = (offset: number) =>
        fs.write(fd, bytes, offset, bytes.length - offset, null, (writeError, written) => {
          if (writeError) return finish(writeError)
          if (offset + written < bytes.length) return writeFrom(offset + written)
          fs.fdatasync(fd, finish)
        })
      writeFrom(0)
    })
  })
}

/** Makes the renames and removals in a directory durable. */
export function syncDirectory(dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(dir, 'r', (openError, fd) => {
      if (openError) return reject(openError)
      fs.fsync(fd, (syncError) =>
        fs.close(fd, (closeError) => (syncError || closeError ? reject(syncError ?? closeError) : resolve())),
      )
    })
  })
}
