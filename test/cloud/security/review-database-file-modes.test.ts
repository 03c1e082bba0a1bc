/**
 * Security review, Info: hajri.db and its WAL were created mode 0644 (readable by every user of the
 * host) while secret.key beside them is 0600. The database directory is now made 0700 and the files
 * 0600, and files an earlier version left wider are narrowed when the database is opened.
 */
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'

const mode = (path: string) => statSync(path).mode & 0o777

describe('the SQLite database files', () => {
  let root: string | undefined
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true })
  })

  it('security review (info): creates the database directory 0700 and the database, WAL and shared-memory files 0600', async () => {
    root = mkdtempSync(join(tmpdir(), 'hajri-modes-'))
    const path = join(root, 'data', 'hajri.db')
    const database = openDatabase(`sqlite:${path}`)
    try {
      await migrateToLatest(database.db)
      await database.durable()
      expect(mode(join(root, 'data')).toString(8)).toBe('700')
      for (const file of [path, `${path}-wal`, `${path}-shm`])
        expect([file, mode(file).toString(8)]).toEqual([file, '600'])
    } finally {
      await database.close()
    }
  })

  it('security review (info): narrows a database file an earlier version left readable by others', async () => {
    root = mkdtempSync(join(tmpdir(), 'hajri-modes-'))
    const path = join(root, 'hajri.db')
    const first = openDatabase(`sqlite:${path}`)
    await migrateToLatest(first.db)
    await first.close()
    chmodSync(path, 0o644)
    writeFileSync(`${path}-wal`, '')
    chmodSync(`${path}-wal`, 0o644)
    const again = openDatabase(`sqlite:${path}`)
    try {
      expect(mode(path).toString(8)).toBe('600')
      expect(mode(`${path}-wal`).toString(8)).toBe('600')
    } finally {
      await again.close()
    }
  })
})
