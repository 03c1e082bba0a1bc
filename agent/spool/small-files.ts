import { close, open, read, unlink } from 'node:fs'

/**
 * File operations for the spool's many small files, on Node's callback API. A drain after a long
 * outage reads and removes up to a million one-punch files: fs/promises' readFile takes five trips
 * to libuv's thread pool per file (open, fstat, read, read to EOF, close), each with a FileHandle
 * and promises around it; knowing the size from the index, open, one read and close do, and
 * measured at about half the CPU per file. That CPU is taken from the cloud's share of a small
 * site PC, or from ingest.
 */

/** What one read asks for once a file turns out longer than expected. */
const MORE_BYTES = 64 * 1024

/**
 * The file's text. A file exactly `expectedBytes` long (the size the index holds) takes one read
 * into a buffer of that size plus one byte (the spare byte tells it from a longer file). Anything
 * else reads on until the end of the file: a longer or shorter file (changed since it was indexed),
 * and a read that returns less than asked before the end (POSIX allows it; a pipe does it), which
 * must never be taken for the whole file: a chunk cut short would be quarantined as corrupt.
 */
export function readSmallFile(path: string, expectedBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (openError, fd) => {
      if (openError) return reject(openError)
      const full: Buffer[] = []
      let buffer = Buffer.allocUnsafe(Math.max(0, expectedBytes) + 1)
      let filled = 0
      const finish = (error: Error | null) =>
        close(fd, (closeError) => {
          if (error || closeError) return reject(error ?? closeError)
          if (full.length === 0) return resolve(buffer.toString('utf8', 0, filled))
          full.push(buffer.subarray(0, filled))
          resolve(Buffer.concat(full).toString('utf8'))
        })
      const readMore = () =>
        // Position null: on from where the last read ended (a pipe has no positions).
        read(fd, buffer, filled, buffer.length - filled, null, (readError, bytesRead) => {
          if (readError) return finish(readError)
          filled += bytesRead
          if (bytesRead === 0 || (full.length === 0 && filled === expectedBytes)) return finish(null)
          if (filled === buffer.length) {
            full.push(buffer)
            buffer = Buffer.allocUnsafe(MORE_BYTES)
            filled = 0
          }
          readMore()
        })
      readMore()
    })
  })
}

/** Removes a file; one already gone is not an error (a removal retried after a crash). */
export function unlinkIfPresent(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    unlink(path, (err) => (err && err.code !== 'ENOENT' ? reject(err) : resolve()))
  })
}
