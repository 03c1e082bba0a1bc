import { constants } from 'node:fs'
import { access, readFile, stat } from 'node:fs/promises'

/**
 * The `...File` settings (docs/development/architecture.md#configuration): a secret kept in a file of its own
 * (mode 0600, a systemd credential, a Docker or Kubernetes secret) instead of in the configuration. Messages
 * say what is wrong with the file, without its content or even its name: writing
 * `passwordFile: <the password>` instead of `password:` is an easy slip, and the name would then be
 * the secret. The problem's path and line say which setting it is.
 */

/** A secret is a password or a client secret: a file bigger than this is the wrong file. */
const MAX_SECRET_BYTES = 64 * 1024

export type FileResult<T> = { ok: true; value: T } | { ok: false; message: string; missing?: true }

function describeError(err: unknown): { ok: false; message: string; missing?: true } {
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return { ok: false, message: 'names a file that does not exist', missing: true }
  if (code === 'EACCES' || code === 'EPERM') {
    return { ok: false, message: 'names a file this user cannot read (permission denied)' }
  }
  return { ok: false, message: `names a file that cannot be read (${code ?? 'unknown error'})` }
}

/** Checks that a file the agent will open later (a TLS certificate or key) is there and readable. */
export async function checkReadableFile(file: string): Promise<FileResult<string>> {
  try {
    if (!(await stat(file)).isFile()) return { ok: false, message: 'names a directory or device, not a file' }
    await access(file, constants.R_OK)
    return { ok: true, value: file }
  } catch (err) {
    return describeError(err)
  }
}

/**
 * Reads a secret file: a UTF-8 byte order mark and trailing line ends are dropped (`echo secret >
 * file` and Notepad both add them); anything else, spaces included, is part of the secret.
 */
export async function readSecretFile(file: string): Promise<FileResult<string>> {
  try {
    const info = await stat(file)
    if (!info.isFile()) return { ok: false, message: 'names a directory or device, not a file' }
    if (info.size > MAX_SECRET_BYTES) {
      return { ok: false, message: 'names a file larger than 64 KiB: not a secret file' }
    }
    const text = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '').replace(/[\r\n]+$/, '')
    if (text === '') return { ok: false, message: 'names an empty file' }
    return { ok: true, value: text }
  } catch (err) {
    return describeError(err)
  }
}
