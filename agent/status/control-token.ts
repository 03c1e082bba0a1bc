import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { dirname } from 'node:path'

/** 32 random bytes, base64url (RFC 4648 §5): 43 characters, 256 bits. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/

/** On POSIX, a symbolic link at the token's path is not followed (O_NOFOLLOW); Windows has none. */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0

/**
 * The agent's control token, kept in `path` (in spool.dir): the token already there when it is one
 * this agent wrote and nobody else can have read, else a new one written there, mode 0600. Kept
 * across restarts, so that a script holding it goes on working; to change it, delete the file and
 * restart the agent.
 *
 * A file that is not a regular file, is owned by another user, can be read by group or others
 * (POSIX mode bits; Windows has ACLs instead, and the spool directory's are the protection there)
 * or does not hold a token is replaced: its token may be known to someone else.
 */
export async function ensureControlToken(path: string): Promise<string> {
  const existing = await readOwnToken(path)
  if (existing !== undefined) return existing
  const token = randomBytes(32).toString('base64url')
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  await writeTokenFile(path, token)
  return token
}

async function readOwnToken(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | NO_FOLLOW)
  } catch (err) {
    // ENOENT: none yet. ELOOP: a symbolic link, replaced below by a file of our own.
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ELOOP') return undefined
    throw err
  }
  try {
    const info = await handle.stat()
    if (!info.isFile() || info.size > 1024) return undefined
    if (process.platform !== 'win32') {
      if ((info.mode & 0o077) !== 0) return undefined
      if (process.getuid && info.uid !== process.getuid()) return undefined
    }
    const token = (await handle.readFile('utf8')).trim()
    return TOKEN_SHAPE.test(token) ? token : undefined
  } finally {
    await handle.close()
  }
}

/**
 * Writes the token to `path`, readable by this user only: a new file (O_EXCL, so nothing planted
 * at the temporary name is followed) renamed over the old one, so a reader never sees half a token.
 */
async function writeTokenFile(path: string, token: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`
  await rm(temporary, { force: true })
  const handle = await open(temporary, 'wx', 0o600)
  try {
    // The umask can only take bits away from 0600; chmod says it outright all the same.
    await handle.chmod(0o600)
    await handle.writeFile(`${token}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temporary, path)
}
