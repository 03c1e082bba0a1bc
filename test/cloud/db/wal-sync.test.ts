import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../../cloud/app.js'
import { type DatabaseHandle, openDatabase } from '../../../cloud/db/database.js'
import { migrateToLatest } from '../../../cloud/db/migrate.js'
import { openWalFile, type SyncableFile, WalSync } from '../../../cloud/db/wal-sync.js'
import { createServices } from '../../../cloud/services.js'
import { createTestDatabaseUrl, employee, TEST_ACTOR } from '../../support/cloud-harness.js'

/** A WAL file whose fsyncs finish when the test says so. */
class HeldDisk {
  pending: { resolve: () => void; reject: (err: Error) => void }[] = []
  fsyncs = 0
  failWith: Error | undefined

  async open(databasePath: string): Promise<SyncableFile> {
    const real = await openWalFile(databasePath)
    return {
      datasync: () => {
        this.fsyncs++
        if (this.failWith) return Promise.reject(this.failWith)
        return new Promise<void>((resolve, reject) => this.pending.push({ resolve, reject })).then(() =>
          real.datasync(),
        )
      },
      close: () => real.close(),
    }
  }

  releaseAll(): void {
    for (const p of this.pending.splice(0)) p.resolve()
  }

  /** Lets every fsync through until `promise` settles. */
  async drain<T>(promise: Promise<T>): Promise<T> {
    let settled = false
    const done = promise.finally(() => {
      settled = true
    })
    while (!settled) {
      this.releaseAll()
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    return done
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 30))

/** Waits (polling) until `condition` holds; the test's own timeout bounds it. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('durability of SQLite commits (WalSync)', () => {
  let disk: HeldDisk
  let database: DatabaseHandle
  let app: FastifyInstance
  let key: string
  let drop: () => Promise<void>

  beforeEach(async () => {
    disk = new HeldDisk()
    const target = await createTestDatabaseUrl('sqlite')
    drop = target.drop
    database = openDatabase(target.url, { openWal: (path) => disk.open(path) })
    await migrateToLatest(database.db)
    const services = createServices(database)
    const { tenantId } = await services.tenants.create({ name: 'T', adminEmail: 'o@t.test' })
    await services.employees.upsert(tenantId, [employee('E1')])
    key = (await services.apiKeys.create(tenantId, { scopes: ['attendance:write'] }, TEST_ACTOR)).key
    app = await buildApp({
      config: { bodyLimitBytes: 1 << 20, trustProxy: false, logLevel: 'silent' },
      database,
      logger: false,
    })
    // The setup's own commits: let them reach the disk.
    await disk.drain(database.durable())
  })

  afterEach(async () => {
    disk.failWith = undefined
    await disk.drain(app.close())
    await drop()
  })

  const punch = (externalId: string) =>
    app.inject({
      method: 'POST',
      url: '/api/public/v1/attendance/punches',
      headers: { authorization: `Bearer ${key}` },
      payload: { employeeCode: 'E1', punchType: 'IN', externalId },
    })

  it('answers 201 only after the fsync that makes the punch durable', async () => {
    let answered = false
    const response = punch('p-1').then((res) => {
      answered = true
      return res
    })
    await until(() => disk.pending.length === 1)
    await settle()
    expect(answered).toBe(false)
    expect((await disk.drain(response)).statusCode).toBe(201)
  })

  it('lets concurrent commits share fsyncs (group commit)', async () => {
    const before = disk.fsyncs
    const results = await disk.drain(Promise.all(Array.from({ length: 40 }, (_, i) => punch(`g-${i}`))))
    expect(results.map((r) => r.statusCode)).toEqual(Array(40).fill(201))
    const fsyncs = disk.fsyncs - before
    expect(fsyncs).toBeGreaterThan(0)
    expect(fsyncs).toBeLessThan(40)
  })

  it('answers a 500, not a 201, when the fsync fails, and keeps refusing afterwards', async () => {
    disk.failWith = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })
    const res = await punch('f-1')
    expect(res.statusCode).toBe(500)
    expect(res.headers.location).toBeUndefined()
    expect(res.json()).toMatchObject({ code: 'internal_error', status: 500 })
    expect(res.body).not.toContain('EIO')
    disk.failWith = undefined
    expect((await punch('f-2')).statusCode).toBe(500)
  })

  it('holds even a read that could show an unsynced commit', async () => {
    const write = punch('r-1')
    await until(() => disk.pending.length === 1)
    let readDone = false
    const read = app.inject({ method: 'GET', url: '/healthz' }).then(() => {
      readDone = true
    })
    await settle()
    expect(readDone).toBe(false)
    await disk.drain(Promise.all([write, read]))
  })
})

describe('WalSync', () => {
  it('does nothing when nothing was committed', async () => {
    let opened = 0
    const sync = new WalSync({ commits: 0 }, async () => {
      opened++
      return { datasync: async () => {}, close: async () => {} }
    })
    await sync.durable()
    expect(opened).toBe(0)
    expect(sync.syncs).toBe(0)
  })

  it('waits for a second fsync when a commit lands while one is under way', async () => {
    const connection = { commits: 1 }
    const releases: (() => void)[] = []
    const sync = new WalSync(connection, async () => ({
      datasync: () => new Promise<void>((resolve) => releases.push(resolve)),
      close: async () => {},
    }))
    const first = sync.durable()
    await settle()
    connection.commits = 2
    let secondDone = false
    const second = sync.durable().then(() => {
      secondDone = true
    })
    releases.shift()?.()
    await first
    await settle()
    expect(secondDone).toBe(false)
    expect(releases).toHaveLength(1)
    releases.shift()?.()
    await second
    expect(sync.syncs).toBe(2)
  })
})
