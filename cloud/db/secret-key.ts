import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ConfigError } from '../settings/config-error.js'
import type { DatabaseTarget } from '../settings/database-url.js'

export interface SecretKeySettings {
  /** 32 bytes, base64 (HAJRI_SECRET_KEY). */
  secretKey?: string | undefined
  /** A file holding that (HAJRI_SECRET_KEY_FILE). */
  secretKeyFile?: string | undefined
}

function decode(text: string, from: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64')
  if (key.length !== 32)
    throw new ConfigError([`${from}: must be 32 bytes in base64 (openssl rand -base64 32)`])
  return key
}

/**
 * The key of the SecretBox. HAJRI_SECRET_KEY or HAJRI_SECRET_KEY_FILE; on PostgreSQL one is
 * required, since every instance must share it. On SQLite, left unset, a key is made on first use
 * next to the database (`secret.key`, mode 0600), so a one-machine install needs no setting: back
 * it up with the database, or the webhook secrets cannot be read again.
 */
export function loadSecretKey(settings: SecretKeySettings, database: DatabaseTarget): Buffer {
  if (settings.secretKey) return decode(settings.secretKey, 'HAJRI_SECRET_KEY')
  if (settings.secretKeyFile)
    return decode(readFileSync(settings.secretKeyFile, 'utf8'), 'HAJRI_SECRET_KEY_FILE')
  if (database.dialect === 'postgres') {
    throw new ConfigError([
      'HAJRI_SECRET_KEY (or HAJRI_SECRET_KEY_FILE): required with PostgreSQL, the same on every instance (openssl rand -base64 32)',
    ])
  }
  if (database.path === ':memory:') return randomBytes(32)
  const file = join(dirname(database.path), 'secret.key')
  try {
    return decode(readFileSync(file, 'utf8'), file)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  mkdirSync(dirname(file), { recursive: true })
  const key = randomBytes(32)
  try {
    // 'wx': if another process made it meanwhile, theirs is the key.
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
    return key
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    return decode(readFileSync(file, 'utf8'), file)
  }
}
