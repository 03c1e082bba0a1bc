import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { access, open, readdir, stat, statfs, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { formatByteSize } from '../config/byte-size.js'
import { type CheckOutcome, describeError, fail, pass, warn } from './check-result.js'

/** Below this free, the spool cannot take even a few chunks: punches would be refused now. */
const MIN_FREE_BYTES = 64 * 1024 * 1024

/** The closest directory of `dir` (itself or a parent) that exists. */
async function existingAncestor(dir: string): Promise<string> {
  let current = dir
  for (;;) {
    try {
      if ((await stat(current)).isDirectory()) return current
    } catch {}
    const parent = dirname(current)
    if (parent === current) return current
    current = parent
  }
}

/** Bytes of the files in the spool directory and one level below (its chunks and dead letters). */
async function usedBytes(dir: string, depth = 1): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name)
    if (entry.isFile()) total += (await stat(path).catch(() => ({ size: 0 }))).size
    else if (entry.isDirectory() && depth > 0) total += await usedBytes(path, depth - 1)
  }
  return total
}

/**
 * The spool directory (docs/decisions/0024-ack-after-fsync.md: every punch is fsynced there before
 * a device is told it is stored): it exists or can be created, this user can write to it (a probe
 * file written, fsynced and removed, as a chunk is), and its disk has room for spool.maxBytes.
 * Nothing is created here: the agent makes the directory when it starts.
 */
export async function checkSpool(spool: { dir: string; maxBytes: number }): Promise<CheckOutcome> {
  const { dir, maxBytes } = spool
  const owner =
    'run the agent as the user that owns it, or give that user the directory (Linux: sudo chown -R hajri: DIR)'.replace(
      'DIR',
      dir,
    )
  const info = await stat(dir).catch(() => undefined)
  if (info && !info.isDirectory()) {
    return fail(`${dir} is not a directory`, 'point spool.dir at a directory, or remove what is there')
  }
  const ancestor = await existingAncestor(dir)
  if (ancestor !== dir) {
    try {
      await access(ancestor, constants.W_OK | constants.X_OK)
    } catch (err) {
      return fail(`${dir} does not exist and cannot be created in ${ancestor} (${describeError(err)})`, owner)
    }
  } else {
    const probe = join(dir, `.doctor-probe-${process.pid}-${randomBytes(4).toString('hex')}`)
    try {
      const handle = await open(probe, 'wx')
      try {
        await handle.writeFile('hajri-agent doctor\n')
        await handle.sync()
      } finally {
        await handle.close()
      }
      await unlink(probe)
    } catch (err) {
      await unlink(probe).catch(() => {})
      return fail(`${dir} cannot be written by this user (${describeError(err)})`, owner)
    }
  }
  const fs = await statfs(ancestor)
  const freeBytes = fs.bavail * fs.bsize
  const used = ancestor === dir ? await usedBytes(dir) : 0
  const room = `${formatByteSize(freeBytes)} free on its disk, spool.maxBytes ${formatByteSize(maxBytes)}, ${formatByteSize(used)} spooled`
  const where = ancestor === dir ? `${dir} is writable` : `${dir} does not exist yet; the agent can create it`
  if (freeBytes < MIN_FREE_BYTES) {
    return fail(
      `${where}; ${room}`,
      'the disk is full: punches cannot be stored; free space on it, or move spool.dir to a disk with room',
    )
  }
  if (freeBytes < maxBytes - used) {
    return warn(
      `${where}; ${room}: the disk fills before the spool's limit`,
      'free space on the disk, move spool.dir to a disk with room, or lower spool.maxBytes to what the disk holds',
    )
  }
  return pass(`${where}; ${room}`)
}
