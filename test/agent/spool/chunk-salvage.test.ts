/**
 * A corrupted spool chunk (docs/development/architecture.md#the-agents-guarantees): a damaged chunk file is
 * quarantined, and every punch record in it that is still whole is salvaged into the spool first, so damage
 * to a chunk's frame (its JSON around the records) or to one record loses nothing else. salvageItems alone,
 * then through the Spool and DeadLetters as the agent uses them.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import { punchId } from '../../../agent/punch/punch-id.js'
import type { SpooledPunch } from '../../../agent/punch/spooled-punch.js'
import { salvageItems } from '../../../agent/spool/chunk-salvage.js'
import { DeadLetters } from '../../../agent/spool/dead-letters.js'
import { CorruptFileError } from '../../../agent/spool/durable-json-file.js'
import { Spool } from '../../../agent/spool/spool.js'
import { parseTimestamp } from '../../../shared/time.js'
import { allDeadLetters } from './all-dead-letters.js'

/** A punch as the agent makes it: its id is the hash of its fields (docs/decisions/0025-punch-id.md). */
function punch(i: number): SpooledPunch {
  const punchedAt = `2026-11-20T${String(8 + (i % 10)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:00+05:30`
  const employeeCode = `E${String(i).padStart(4, '0')}`
  const punchType = i % 2 ? 'OUT' : 'IN'
  return {
    id: punchId('gate-1', employeeCode, parseTimestamp(punchedAt) as number, punchType),
    deviceId: 'gate-1',
    employeeCode,
    punchType,
    punchedAt,
    receivedAt: '2026-11-21T03:30:00.000000Z',
  }
}

interface Thing {
  n: number
  s: string
}
const isThing = (v: unknown): v is Thing =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Thing).n === 'number' &&
  typeof (v as Thing).s === 'string'
const things = (count: number): Thing[] =>
  Array.from({ length: count }, (_, n) => ({ n, s: n % 3 === 0 ? `brace } and { "quote" \\ ${n}` : `t${n}` }))
const chunkText = (items: unknown[]) => JSON.stringify({ kind: 'chunk', version: 1, seq: 7, items })

describe('salvageItems', () => {
  it('finds every record of a chunk whose frame is broken or which has garbage appended', () => {
    const items = things(30)
    const whole = chunkText(items)
    const damaged = [
      whole.replace('"version":1', '"version":1,,'),
      `${whole}\u0000\u0000garbage{"n":`,
      `${whole.slice(0, -2)}\u0000\u0000\u0000`,
      `\u0000\ufffd"{{ ${whole.slice(1)}`,
    ]
    for (const text of damaged) {
      expect(() => JSON.parse(text)).toThrow()
      expect(salvageItems(text, { isItem: isThing })).toEqual({ items, cutShort: false })
    }
  })

  it('loses only the records the damage touched', () => {
    const items = things(10)
    const whole = chunkText(items)
    // Record 4 cut in the middle of its string; the torn end loses the last record's close.
    const at = whole.indexOf('"t4"')
    const text = `${whole.slice(0, at + 2)}\u0000\u0000${whole.slice(at + 5, -4)}`
    const { items: found } = salvageItems(text, { isItem: isThing })
    expect(found.map((t) => t.n)).toEqual([0, 1, 2, 3, 5, 6, 7, 8])
    // A record of the right syntax but the wrong shape is not an item.
    const wrong = whole.replace('"n":2,', '"n":"2",')
    expect(salvageItems(wrong, { isItem: isThing }).items.map((t) => t.n)).toEqual([
      0, 1, 3, 4, 5, 6, 7, 8, 9,
    ])
  })

  it('keeps an item whole with the objects inside it, not those objects again', () => {
    const outer = [
      { n: 1, s: 'a', inner: { n: 2, s: 'b' } },
      { n: 3, s: 'c' },
    ]
    const text = `${chunkText(outer)}!`
    expect(salvageItems(text, { isItem: isThing }).items).toEqual(outer)
  })

  it('finds every record around random garbage full of braces and quotes', () => {
    const items = things(100)
    const whole = chunkText(items)
    let state = 42
    const alphabet = '{{}}""\\:,[]ab\u0000'
    const garbage = Array.from({ length: 20_000 }, () => {
      state = (state * 1_103_515_245 + 12_345) % 2 ** 31
      return alphabet[state % alphabet.length]
    }).join('')
    // Between two records: the damage spoils no record, only the frame.
    const cut = whole.indexOf('{"n":50')
    const text = `${whole.slice(0, cut)}${garbage}${whole.slice(cut)}`
    expect(salvageItems(text, { isItem: isThing, maxItemChars: 4096 })).toEqual({ items, cutShort: false })
  })

  it('finds nothing in nothing, and gives up on pathological damage rather than taking forever', () => {
    expect(salvageItems('', { isItem: isThing })).toEqual({ items: [], cutShort: false })
    expect(salvageItems('\u0000'.repeat(1000), { isItem: isThing })).toEqual({ items: [], cutShort: false })
    // Every brace opens an object that never closes: each try reads maxItemChars. The work is
    // bounded by the file's length, so the search stops, and says so.
    const text = `${'{'.repeat(200_000)}${chunkText(things(3))}`
    expect(salvageItems(text, { isItem: isThing, maxItemChars: 4096 })).toEqual({ items: [], cutShort: true })
  })
})

describe('a damaged spool chunk', () => {
  let dir: string
  let lines: Record<string, unknown>[]
  const log = () =>
    pino(
      { level: 'error' },
      {
        write: (line: string) => {
          lines.push(JSON.parse(line))
        },
      },
    )
  const open = async (chunkPunches = 50) => {
    const spool = new Spool({
      dir,
      maxBytes: 1 << 30,
      chunkPunches,
      log: log(),
      events: new EventBus(pino({ level: 'silent' })),
    })
    await spool.start()
    return spool
  }
  /** Reads every chunk as the forwarder does: a corrupt one is skipped (and salvaged behind). */
  const drain = async (spool: Spool) => {
    const read: SpooledPunch[] = []
    const errors: unknown[] = []
    for (const ref of spool.pending()) {
      try {
        read.push(...(await spool.read(ref)))
      } catch (err) {
        errors.push(err)
      }
    }
    return { read, errors }
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-salvage-'))
    lines = []
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('salvages every intact punch of a chunk with a broken frame and garbage appended, then quarantines it', async () => {
    const spool = await open()
    const punches = Array.from({ length: 120 }, (_, i) => punch(i))
    await spool.append(punches)
    await spool.stop()
    const [first] = spool.pending()
    if (!first) throw new Error('no chunk')
    const text = await readFile(first.file, 'utf8')
    await writeFile(
      first.file,
      `${text.replace('"kind":"chunk"', '"kind":"chunk",,')}\u0000\u0000{"id":"hjp_`,
    )

    const again = await open()
    const { read, errors } = await drain(again)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(CorruptFileError)
    // Nothing lost: the 70 of the intact chunks, then the 50 salvaged, in their order, at the end.
    expect(read.map((p) => p.id)).toEqual([...punches.slice(50), ...punches.slice(0, 50)].map((p) => p.id))
    expect(again.stats()).toMatchObject({ quarantined: 1, salvaged: 50, unrecoverable: 0, items: 120 })
    const quarantined = await readdir(join(dir, 'quarantine'))
    expect(quarantined).toHaveLength(1)
    expect(await readFile(join(dir, 'quarantine', quarantined[0] as string), 'utf8')).toContain('{"id":"hjp_')
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'corrupt chunk quarantined, its intact items salvaged into the spool; the rest carries on',
        file: first.file,
        items: 50,
        salvaged: 50,
        unrecoverable: 0,
      }),
    ])

    // Durable: a restart finds the salvaged punches, and no trace of the damaged file but quarantine.
    const reopened = await open()
    expect((await drain(reopened)).read.map((p) => p.id).sort()).toEqual(punches.map((p) => p.id).sort())
    expect(reopened.stats()).toMatchObject({ quarantined: 0, items: 120 })
  })

  it('counts as unrecoverable a record the damage altered, and does not forward it as a punch', async () => {
    const spool = await open(10)
    const punches = Array.from({ length: 10 }, (_, i) => punch(i))
    await spool.append(punches)
    const [ref] = spool.pending()
    if (!ref) throw new Error('no chunk')
    const text = await readFile(ref.file, 'utf8')
    // One employee code changed (the shape is right, the id no longer its hash), one record torn.
    const altered = text.replace('"employeeCode":"E0003"', '"employeeCode":"E0008"')
    const torn = altered.replace('"punchType":"OUT","punchedAt":"2026-11-20T13:05', '"punchType":"OU\u0000')
    await writeFile(ref.file, torn)
    await expect(spool.read(ref)).rejects.toBeInstanceOf(CorruptFileError)
    const { read } = await drain(spool)
    expect(read.map((p) => p.id)).toEqual(punches.filter((_, i) => i !== 3 && i !== 5).map((p) => p.id))
    expect(spool.stats()).toMatchObject({ quarantined: 1, salvaged: 8, unrecoverable: 2 })
    expect(lines[0]).toMatchObject({ items: 10, salvaged: 8, unrecoverable: 2 })
  })

  it('salvages once when two readers meet the same damaged chunk', async () => {
    const spool = await open()
    await spool.append([punch(1), punch(2)])
    const [ref] = spool.pending()
    if (!ref) throw new Error('no chunk')
    await writeFile(ref.file, `${await readFile(ref.file, 'utf8')}garbage`)
    const results = await Promise.allSettled([spool.read(ref), spool.read(ref)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(spool.stats()).toMatchObject({ quarantined: 1, salvaged: 2, items: 2, chunks: 1 })
    expect(await readdir(join(dir, 'quarantine'))).toHaveLength(1)
  })

  it('leaves the chunk in place, to be tried again, when the salvaged punches cannot be stored', async () => {
    const spool = await open()
    await spool.append([punch(1), punch(2), punch(3)])
    const [ref] = spool.pending()
    if (!ref) throw new Error('no chunk')
    await writeFile(ref.file, `${await readFile(ref.file, 'utf8')}garbage`)
    // The next chunk file's temporary name taken by a directory: the salvage's write fails.
    const blocker = join(dir, `chunk-${String(ref.seq + 1).padStart(16, '0')}-3.json.tmp`)
    await mkdir(blocker)
    const error = await spool.read(ref).catch((err: unknown) => err)
    expect(error).not.toBeInstanceOf(CorruptFileError)
    expect((error as NodeJS.ErrnoException).code).toBe('EISDIR')
    expect(spool.stats()).toMatchObject({ quarantined: 0, salvaged: 0, items: 3 })
    expect([...spool.pending()].map((r) => r.seq)).toEqual([ref.seq])

    await rmdir(blocker)
    await expect(spool.read(ref)).rejects.toBeInstanceOf(CorruptFileError)
    expect(spool.stats()).toMatchObject({ quarantined: 1, salvaged: 3, unrecoverable: 0, items: 3 })
  })

  it('salvages dead letters too, whole with the punch inside them', async () => {
    const deadDir = join(dir, 'dead-letters')
    const dead = new DeadLetters({ dir: deadDir, log: log() })
    await dead.open()
    await dead.add([
      { deviceId: 'gate-1', reason: 'rejected_by_cloud', detail: 'no such employee', punch: punch(1) },
      { deviceId: 'gate-1', reason: 'malformed_frame', detail: 'not JSON', raw: '{"employeeCode": "E1",' },
    ])
    const [file] = (await readdir(deadDir)).filter((f) => f.startsWith('dead-'))
    const path = join(deadDir, file as string)
    await writeFile(path, (await readFile(path, 'utf8')).replace('"version":1', '"version":'))
    const reopened = new DeadLetters({ dir: deadDir, log: log() })
    await reopened.open()
    const listed = await allDeadLetters(reopened)
    expect(listed.map((e) => [e.reason, e.punch?.id ?? e.raw])).toEqual([
      ['rejected_by_cloud', punch(1).id],
      ['malformed_frame', '{"employeeCode": "E1",'],
    ])
    expect(lines[0]).toMatchObject({ items: 2, salvaged: 2, unrecoverable: 0 })
  })
})
