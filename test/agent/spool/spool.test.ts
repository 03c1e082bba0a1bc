import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { CorruptFileError } from '../../../agent/spool/durable-json-file.js'
import { Spool, SpoolFullError } from '../../../agent/spool/spool.js'

const log = pino({ level: 'silent' })

function punch(i: number): SpooledPunch {
  return {
    id: `hjp_${String(i).padStart(32, '0')}`,
    deviceId: 'gate-1',
    employeeCode: `E${i % 50}`,
    punchType: i % 2 ? 'OUT' : 'IN',
    punchedAt: '2026-11-21T09:00:00+05:30',
    receivedAt: '2026-11-21T03:30:00.000000Z',
  }
}

describe('spool', () => {
  let dir: string
  const open = async (options: { maxBytes?: number; chunkPunches?: number } = {}) => {
    const spool = new Spool({
      dir,
      maxBytes: options.maxBytes ?? 1 << 30,
      chunkPunches: options.chunkPunches ?? 100,
      log,
      events: new EventBus(log),
    })
    await spool.start()
    return spool
  }
  const all = async (spool: Spool) => {
    const items: SpooledPunch[] = []
    for (const ref of spool.pending()) items.push(...(await spool.read(ref)))
    return items
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-spool-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('keeps punches in order, across a restart', async () => {
    const spool = await open()
    for (let i = 0; i < 5; i++) await spool.append([punch(i)])
    await spool.stop()
    const again = await open()
    expect((await all(again)).map((p) => p.id)).toEqual([0, 1, 2, 3, 4].map((i) => punch(i).id))
    expect(again.stats().items).toBe(5)
  })

  it('lets concurrent appends share a commit (group commit) in bounded chunk files', async () => {
    const spool = await open({ chunkPunches: 50 })
    await Promise.all(Array.from({ length: 300 }, (_, i) => spool.append([punch(i)])))
    const files = (await readdir(dir)).filter((f) => f.startsWith('chunk-'))
    // 300 appends in the same turn of the event loop: 6 full chunks, not 300 files.
    expect(files).toHaveLength(6)
    expect(spool.pending().every((ref) => ref.count <= 50)).toBe(true)
    expect((await all(spool)).map((p) => p.id)).toEqual(Array.from({ length: 300 }, (_, i) => punch(i).id))
  })

  it('removes a chunk only when told, durably', async () => {
    const spool = await open({ chunkPunches: 2 })
    await spool.append([punch(1), punch(2), punch(3)])
    const [first] = spool.pending()
    if (!first) throw new Error('no chunk')
    await spool.remove([first])
    await spool.stop()
    const again = await open()
    expect((await all(again)).map((p) => p.id)).toEqual([punch(3).id])
  })

  it('drops the leftovers of an interrupted write at start: they were never acknowledged', async () => {
    await writeFile(join(dir, 'chunk-0000000000000009-1.json.tmp'), '{"half": ')
    const spool = await open()
    expect(spool.stats().items).toBe(0)
    expect(await readdir(dir)).toEqual([])
  })

  it('quarantines a corrupt chunk, reports it, and carries on with the others', async () => {
    const spool = await open({ chunkPunches: 1 })
    await spool.append([punch(1), punch(2), punch(3)])
    const [, middle] = spool.pending()
    if (!middle) throw new Error('no chunk')
    await writeFile(middle.file, '{"kind":"chunk","version":1,"seq":2,"items":[{"id":')
    await spool.stop()
    const again = await open({ chunkPunches: 1 })
    const refs = again.pending()
    expect(refs).toHaveLength(3)
    await expect(again.read(refs[1] as (typeof refs)[number])).rejects.toBeInstanceOf(CorruptFileError)
    expect(again.stats()).toMatchObject({ items: 2, quarantined: 1 })
    const kept = await readdir(join(dir, 'quarantine'))
    expect(kept).toHaveLength(1)
    expect(await readFile(join(dir, 'quarantine', kept[0] as string), 'utf8')).toContain('"items":[{"id":')
    expect((await all(again)).map((p) => p.id)).toEqual([punch(1).id, punch(3).id])
  })

  it('treats a chunk whose content does not match its name as corrupt', async () => {
    const spool = await open({ chunkPunches: 5 })
    await spool.append([punch(1), punch(2)])
    const [ref] = spool.pending()
    if (!ref) throw new Error('no chunk')
    const data = JSON.parse(await readFile(ref.file, 'utf8'))
    data.items.pop()
    await writeFile(ref.file, JSON.stringify(data))
    await expect(spool.read(ref)).rejects.toBeInstanceOf(CorruptFileError)
  })

  it('refuses new punches at its size cap, keeps the old ones, and takes punches again once there is room', async () => {
    const spool = await open({ maxBytes: 1, chunkPunches: 10 })
    await spool.append([punch(1)])
    await expect(spool.append([punch(2)])).rejects.toBeInstanceOf(SpoolFullError)
    expect(spool.full).toBeInstanceOf(SpoolFullError)
    expect((await all(spool)).map((p) => p.id)).toEqual([punch(1).id])
    await spool.remove(spool.pending())
    expect(spool.full).toBeUndefined()
    await spool.append([punch(3)])
    expect(spool.stats().items).toBe(1)
  })
})

describe('dead letters', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-dead-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('keeps entries durably, lists them, and replays the chosen ones into the spool', async () => {
    const dead = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
    await dead.open()
    await dead.add([
      {
        deviceId: 'gate-1',
        reason: 'rejected_by_cloud',
        detail: 'No employee with code E1.',
        punch: punch(1),
        problem: { code: 'employee_not_found' },
      },
      { deviceId: 'gate-1', reason: 'malformed_frame', detail: 'not JSON', raw: '{oops' },
      {
        deviceId: 'gate-2',
        reason: 'device_clock_invalid',
        detail: 'the device says 2000-01-01',
        punch: punch(2),
      },
    ])
    const reopened = new DeadLetters({ dir: join(dir, 'dead-letters'), log })
    await reopened.open()
    const listed = await reopened.list()
    expect(listed.map((e) => e.reason)).toEqual([
      'rejected_by_cloud',
      'malformed_frame',
      'device_clock_invalid',
    ])
    expect(listed.every((e) => /^dlt_/.test(e.id))).toBe(true)

    const requeued: SpooledPunch[] = []
    const result = await reopened.replay(
      async (punches) => {
        requeued.push(...punches)
      },
      (e) => e.reason === 'rejected_by_cloud',
    )
    expect(result).toEqual({ replayed: 1, kept: 2 })
    expect(requeued.map((p) => p.id)).toEqual([punch(1).id])
    expect((await reopened.list()).map((e) => e.reason).sort()).toEqual([
      'device_clock_invalid',
      'malformed_frame',
    ])
  })

  it('keeps an entry if storing its replay fails', async () => {
    const dead = new DeadLetters({ dir, log })
    await dead.open()
    await dead.add([{ deviceId: 'gate-1', reason: 'rejected_by_cloud', detail: 'x', punch: punch(1) }])
    await expect(
      dead.replay(async () => {
        throw new SpoolFullError('cap')
      }),
    ).rejects.toBeInstanceOf(SpoolFullError)
    expect(await dead.list()).toHaveLength(1)
  })
})
