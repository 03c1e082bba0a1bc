import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SqliteDatabase, { type Database } from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ChangeCounter, sqliteChangeCounter } from '../../../cloud/db/sqlite-change-counter.js'

/**
 * The counter on real SQLite connections to one file in WAL mode, as the cloud opens it: one
 * connection is the server's, the other stands for another process (the CLI).
 */
describe('sqliteChangeCounter', () => {
  let dir: string
  let ours: Database
  let theirs: Database
  let counter: ChangeCounter

  const open = (path: string) => {
    const db = new SqliteDatabase(path)
    db.pragma('journal_mode = WAL')
    return db
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-change-counter-'))
    ours = open(join(dir, 'db.sqlite'))
    theirs = open(join(dir, 'db.sqlite'))
    ours.exec(
      'CREATE TABLE watched (id INTEGER PRIMARY KEY, v TEXT, seen INTEGER); CREATE TABLE other (id INTEGER PRIMARY KEY)',
    )
    ours.exec("INSERT INTO watched VALUES (1, 'a', 0), (2, 'b', 0)")
    // `seen` stands for bookkeeping a reader does not act on (a key's last use).
    counter = sqliteChangeCounter(ours, { watched: ['seen'] })
  })
  afterEach(async () => {
    ours.close()
    theirs.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** Whether the counter moved across `change`. */
  function moves(change: () => void): boolean {
    const before = counter.version()
    expect(before).toBeDefined()
    change()
    const after = counter.version()
    expect(after).toBeDefined()
    return after !== before
  }

  it('stays put while nothing happens', () => {
    expect(moves(() => {})).toBe(false)
  })

  it("moves on this connection's UPDATE or DELETE of a watched row, committed or not", () => {
    expect(moves(() => ours.prepare("UPDATE watched SET v = 'x' WHERE id = 1").run())).toBe(true)
    expect(moves(() => ours.prepare('DELETE FROM watched WHERE id = 2').run())).toBe(true)
    // Rolled back: the counter moved anyway (a change it was told of cannot be taken back).
    expect(
      moves(() => {
        ours.exec('BEGIN')
        ours.prepare("UPDATE watched SET v = 'y'").run()
        ours.exec('ROLLBACK')
      }),
    ).toBe(true)
  })

  it('does not move on an UPDATE of ignored columns alone, and moves when it sets any other', () => {
    expect(moves(() => ours.prepare('UPDATE watched SET seen = seen + 1').run())).toBe(false)
    expect(moves(() => ours.prepare("UPDATE watched SET seen = 7, v = 'x' WHERE id = 2").run())).toBe(true)
    // Set to the value it has: still a change, as far as the trigger can know.
    expect(moves(() => ours.prepare('UPDATE watched SET v = v WHERE id = 1').run())).toBe(true)
  })

  it('watches a column added after it was installed', () => {
    counter.version()
    ours.exec('ALTER TABLE watched ADD COLUMN added TEXT')
    expect(counter.version()).toBeDefined()
    expect(moves(() => ours.prepare("UPDATE watched SET added = 'x'").run())).toBe(true)
    expect(moves(() => ours.prepare('UPDATE watched SET seen = 1').run())).toBe(false)
  })

  it("does not move on this connection's INSERT, or on its writes to other tables", () => {
    expect(moves(() => ours.prepare("INSERT INTO watched VALUES (3, 'c', 0)").run())).toBe(false)
    expect(moves(() => ours.prepare('INSERT INTO other VALUES (1)').run())).toBe(false)
    expect(moves(() => ours.prepare('DELETE FROM other').run())).toBe(false)
  })

  it('moves on any commit of another connection, and not on an update it has not committed', () => {
    expect(moves(() => theirs.prepare("UPDATE watched SET v = 'z' WHERE id = 1").run())).toBe(true)
    expect(moves(() => theirs.prepare('INSERT INTO other VALUES (7)').run())).toBe(true)
    const before = counter.version()
    theirs.exec('BEGIN')
    theirs.prepare("UPDATE watched SET v = 'w' WHERE id = 1").run()
    expect(counter.version()).toBe(before)
    theirs.exec('COMMIT')
    expect(counter.version()).not.toBe(before)
  })

  it('cannot tell while a transaction is open on its connection', () => {
    ours.exec('BEGIN')
    ours.prepare('SELECT * FROM watched').all()
    expect(counter.version()).toBeUndefined()
    ours.exec('COMMIT')
    expect(counter.version()).toBeDefined()
  })

  it('watches a table made again by a migration on its own connection', () => {
    counter.version()
    ours.exec(
      'DROP TABLE watched; CREATE TABLE watched (id INTEGER PRIMARY KEY, v TEXT, seen INTEGER, w TEXT)',
    )
    ours.exec("INSERT INTO watched (id, v) VALUES (1, 'a')")
    expect(moves(() => ours.prepare("UPDATE watched SET w = 'x'").run())).toBe(true)
    expect(moves(() => {})).toBe(false)
  })

  it('cannot tell before its tables exist, and watches them once they do', async () => {
    const fresh = open(join(dir, 'fresh.sqlite'))
    try {
      const early = sqliteChangeCounter(fresh, { later: [] })
      expect(early.version()).toBeUndefined()
      fresh.exec('CREATE TABLE later (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO later VALUES (1, null)')
      const before = early.version()
      expect(before).toBeDefined()
      fresh.prepare("UPDATE later SET v = 'x'").run()
      expect(early.version()).not.toBe(before)
    } finally {
      fresh.close()
    }
  })

  it('adds nothing to the database file: another connection sees no trigger of ours', () => {
    counter.version()
    expect(theirs.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger'").all()).toEqual([])
    // And another connection can update the watched table without our function.
    expect(() => theirs.prepare("UPDATE watched SET v = 'q'").run()).not.toThrow()
  })
})
