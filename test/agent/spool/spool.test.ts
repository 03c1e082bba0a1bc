import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { DeadLetters, InvalidCursorError } from '../../../agent/spool/dead-letters.js'
import { CorruptFileError } from '../../../agent/spool/durable-json-file.js'
import { Spool, SpoolFullError } from '../../../agent/spool/spool.js'
import { allDeadLetters } from './all-dead-letters.js'

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
  const open = async (options: { maxBytes?: number; chunkPunches?: number; events?: EventBus } = {}) => {
    const spool = new Spool({
      dir,
      maxBytes: options.maxBytes ?? 1 << 30,
      chunkPunches: options.chunkPunches ?? 100,
      log,
      events: options.events ?? new EventBus(log),
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
    expect([...spool.pending()].every((ref) => ref.count <= 50)).toBe(true)
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
    // The format marker alone (spool-format.ts).
    expect(await readdir(dir)).toEqual(['format.json'])
  })

  it('quarantines a corrupt chunk, reports it, and carries on with the others', async () => {
    const spool = await open({ chunkPunches: 1 })
    await spool.append([punch(1), punch(2), punch(3)])
    const [, middle] = spool.pending()
    if (!middle) throw new Error('no chunk')
    await writeFile(middle.file, '{"kind":"chunk","version":1,"seq":2,"items":[{"id":')
    await spool.stop()
    const again = await open({ chunkPunches: 1 })
    const refs = [...again.pending()]
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
    const events = new EventBus(log)
    const said: string[] = []
    events.on('spoolFull', () => {
      said.push('full')
    })
    events.on('spoolHasRoom', () => {
      said.push('room')
    })
    const spool = await open({ maxBytes: 1, chunkPunches: 10, events })
    await spool.append([punch(1)])
    await expect(spool.append([punch(2)])).rejects.toBeInstanceOf(SpoolFullError)
    expect(spool.full).toBeInstanceOf(SpoolFullError)
    expect((await all(spool)).map((p) => p.id)).toEqual([punch(1).id])
    await spool.remove([...spool.pending()])
    expect(spool.full).toBeUndefined()
    expect(said).toEqual(['full', 'room'])
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
    const listed = await allDeadLetters(reopened)
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
    expect((await allDeadLetters(reopened)).map((e) => e.reason).sort()).toEqual([
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
    expect(await allDeadLetters(dead)).toHaveLength(1)
  })

  it('lists a page at a time, across chunk files, with a cursor that survives new entries', async () => {
    const dead = new DeadLetters({ dir, log })
    await dead.open()
    // Three adds, three chunk files: pages must cross from one to the next.
    for (let batch = 0; batch < 3; batch++) {
      await dead.add(
        Array.from({ length: 150 }, (_, i) => ({
          deviceId: i % 3 === 0 ? 'gate-2' : 'gate-1',
          reason: 'malformed_frame' as const,
          detail: `frame ${batch * 150 + i}`,
          raw: 'x',
        })),
      )
    }
    const first = await dead.list({ limit: 200 })
    expect(first.data.map((e) => e.detail)).toEqual(Array.from({ length: 200 }, (_, i) => `frame ${i}`))
    expect(first.nextCursor).toEqual(expect.any(String))
    // Entries added after a page was handed out come after it, not in place of it.
    await dead.add([{ deviceId: 'gate-1', reason: 'malformed_frame', detail: 'late', raw: 'y' }])
    const second = await dead.list({ limit: 200, cursor: first.nextCursor ?? undefined })
    expect(second.data.map((e) => e.detail)).toEqual(
      Array.from({ length: 200 }, (_, i) => `frame ${200 + i}`),
    )
    const third = await dead.list({ limit: 200, cursor: second.nextCursor ?? undefined })
    expect(third.data.map((e) => e.detail)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => `frame ${400 + i}`),
      'late',
    ])
    expect(third.nextCursor).toBeNull()
    // The last entry exactly filling a page: no cursor to an empty page.
    expect((await dead.list({ limit: 51, cursor: second.nextCursor ?? undefined })).nextCursor).toBeNull()
    expect((await dead.list()).data).toHaveLength(50)
  })

  it('pages through the entries a filter keeps, and refuses a cursor or limit it cannot use', async () => {
    const dead = new DeadLetters({ dir, log })
    await dead.open()
    await dead.add(
      Array.from({ length: 30 }, (_, i) => ({
        deviceId: i % 3 === 0 ? 'gate-2' : 'gate-1',
        reason: 'malformed_frame' as const,
        detail: `frame ${i}`,
        raw: 'x',
      })),
    )
    const select = (e: { deviceId: string }) => e.deviceId === 'gate-2'
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await dead.list({ limit: 4, cursor, select })
      expect(page.data.length).toBeLessThanOrEqual(4)
      seen.push(...page.data.map((e) => e.detail))
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `frame ${i * 3}`))
    await expect(dead.list({ cursor: 'bm90LWEtY3Vyc29y' })).rejects.toBeInstanceOf(InvalidCursorError)
    await expect(dead.list({ limit: 0 })).rejects.toBeInstanceOf(RangeError)
    await expect(dead.list({ limit: 201 })).rejects.toBeInstanceOf(RangeError)
  })

  it('replays each entry once even when the entries it keeps are written again behind it', async () => {
    const dead = new DeadLetters({ dir, log })
    await dead.open()
    for (let i = 0; i < 3; i++)
      await dead.add([
        { deviceId: 'gate-1', reason: 'rejected_by_cloud', detail: 'x', punch: punch(i) },
        { deviceId: 'gate-1', reason: 'malformed_frame', detail: 'kept', raw: 'r' },
      ])
    const requeued: SpooledPunch[] = []
    const result = await dead.replay(async (punches) => {
      requeued.push(...punches)
    })
    expect(result).toEqual({ replayed: 3, kept: 3 })
    expect(requeued.map((p) => p.id)).toEqual([0, 1, 2].map((i) => punch(i).id))
    expect((await allDeadLetters(dead)).map((e) => e.detail)).toEqual(['kept', 'kept', 'kept'])
  })
})
