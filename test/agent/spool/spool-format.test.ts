import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { EventBus } from '../../../agent/events.js'
import { Spool } from '../../../agent/spool/spool.js'
import {
  checkSpoolFormat,
  openSpoolFormat,
  SPOOL_FORMAT,
  SPOOL_FORMAT_FILE,
  SPOOL_MIGRATIONS,
  SpoolFormatError,
  type SpoolMigration,
  UNMARKED_FORMAT,
} from '../../../agent/spool/spool-format.js'
import { snapshotTree } from './spool-snapshot.js'

/**
 * The spool's format marker (docs/decisions/0087-spool-format-version.md): how the agent opens a
 * new spool, one from before the marker, one of its own, an older one (the migration path, played
 * with made-up formats 2 and 3 over the format-1 fixture) and a newer one (refused, untouched).
 */

const log = pino({ level: 'silent' })
const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url))

let dir: string
let spoolDir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hajri-spool-format-'))
  spoolDir = join(dir, 'spool')
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The format-1 fixture's spool, copied; without its marker, as an agent before markers left it. */
async function fixtureSpool(options: { marker: boolean }): Promise<void> {
  await cp(join(FIXTURES, 'spool-format-1', 'spool'), spoolDir, { recursive: true })
  if (!options.marker) await rm(join(spoolDir, SPOOL_FORMAT_FILE))
}

const marker = async () => JSON.parse(await readFile(join(spoolDir, SPOOL_FORMAT_FILE), 'utf8'))

async function startSpool(version = '7.0.0'): Promise<Spool> {
  const spool = new Spool({
    dir: spoolDir,
    maxBytes: 1 << 30,
    chunkPunches: 100,
    log,
    events: new EventBus(log),
    version,
  })
  await spool.start()
  return spool
}

describe('opening a spool', () => {
  it('marks a new spool with this format and this agent', async () => {
    await (await startSpool('7.0.0')).stop()
    expect(await marker()).toEqual({ format: SPOOL_FORMAT, writtenBy: '7.0.0' })
  })

  it('adopts a spool from an agent before the marker, as the format those agents wrote, and reads it', async () => {
    await fixtureSpool({ marker: false })
    const spool = await startSpool('7.0.0')
    expect(spool.stats().items).toBe(9)
    await spool.stop()
    expect(UNMARKED_FORMAT).toBe(1)
    expect(await marker()).toEqual({ format: SPOOL_FORMAT, writtenBy: '7.0.0' })
  })

  it('leaves the marker of a spool in its own format as it is: it names the agent that made it so', async () => {
    await fixtureSpool({ marker: true })
    const before = await readFile(join(spoolDir, SPOOL_FORMAT_FILE))
    await (await startSpool('7.0.0')).stop()
    expect(await readFile(join(spoolDir, SPOOL_FORMAT_FILE))).toEqual(before)
  })

  it('refuses a newer format with one line saying what to install, and touches nothing', async () => {
    await fixtureSpool({ marker: true })
    await writeFile(
      join(spoolDir, SPOOL_FORMAT_FILE),
      JSON.stringify({ format: SPOOL_FORMAT + 1, writtenBy: '9.4.0', somethingNew: true }),
    )
    // A leftover the chunk log's open would remove: it must still be there.
    await writeFile(join(spoolDir, 'chunk-0000000000000009-1.json.tmp'), '{"half": ')
    const before = await snapshotTree(spoolDir)
    const refused = await startSpool('7.0.0').catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(SpoolFormatError)
    expect(refused).toMatchObject({
      code: 'spool_format_newer',
      message:
        `the spool ${spoolDir} was written by hajri-agent 9.4.0 (spool format ${SPOOL_FORMAT + 1}); ` +
        `this agent (hajri-agent 7.0.0) reads format <= ${SPOOL_FORMAT}: install 9.4.0 or newer; ` +
        'nothing in the spool was changed',
    })
    await expect(checkSpoolFormat(spoolDir, { version: '7.0.0' })).rejects.toMatchObject({
      code: 'spool_format_newer',
    })
    expect(await snapshotTree(spoolDir)).toEqual(before)
  })

  it.each([
    ['not JSON', '{"format":', 'it is not JSON'],
    ['not a marker', '{"format":"one"}', 'it is not a format marker'],
    ['null', 'null', 'it is not a format marker'],
  ])('refuses a marker that is %s, and touches nothing', async (_, text, reason) => {
    await fixtureSpool({ marker: true })
    await writeFile(join(spoolDir, SPOOL_FORMAT_FILE), text)
    const before = await snapshotTree(spoolDir)
    const refused = await startSpool().catch((err: unknown) => err)
    expect(refused).toMatchObject({ code: 'spool_format_unreadable' })
    expect((refused as Error).message).toContain(`(${reason}); nothing in the spool was changed`)
    expect(await snapshotTree(spoolDir)).toEqual(before)
  })

  it('checks without writing: a spool from before the marker stays without one', async () => {
    await fixtureSpool({ marker: false })
    const before = await snapshotTree(spoolDir)
    expect(await checkSpoolFormat(spoolDir, { version: '7.0.0' })).toEqual({
      format: UNMARKED_FORMAT,
      marker: null,
    })
    expect(await snapshotTree(spoolDir)).toEqual(before)
    expect(existsSync(join(spoolDir, SPOOL_FORMAT_FILE))).toBe(false)
  })
})

describe('the upgrade path', () => {
  it('goes from format 1 to this one a step at a time, every format with a fixture', () => {
    // A format change raises SPOOL_FORMAT, appends its step, and adds test/fixtures/spool-format-N
    // (test/fixtures/write-spool-fixture.ts), which spool-upgrade.test.ts then has every later
    // agent read.
    expect(SPOOL_MIGRATIONS.map((m) => m.from)).toEqual(
      Array.from({ length: SPOOL_FORMAT - 1 }, (_, i) => i + 1),
    )
    for (let format = 1; format <= SPOOL_FORMAT; format++)
      expect(
        existsSync(join(FIXTURES, `spool-format-${format}`, 'spool')),
        `fixture of format ${format}`,
      ).toBe(true)
  })

  /** Made-up formats 2 and 3, each step recording that it ran and what marker it found. */
  function steps(ran: string[], fail?: number): SpoolMigration[] {
    return [1, 2].map((from) => ({
      from,
      summary: `step ${from}`,
      migrate: async (at: string) => {
        ran.push(
          `${from}->${from + 1} found ${JSON.parse(await readFile(join(at, SPOOL_FORMAT_FILE), 'utf8')).format}`,
        )
        if (fail === from) throw new Error(`step ${from} cut short`)
      },
    }))
  }

  it('runs each step in order and raises the marker after each', async () => {
    await fixtureSpool({ marker: true })
    const ran: string[] = []
    const found = await openSpoolFormat(spoolDir, {
      version: '7.0.0',
      log,
      format: 3,
      migrations: steps(ran),
    })
    expect(found.format).toBe(1)
    expect(ran).toEqual(['1->2 found 1', '2->3 found 2'])
    expect(await marker()).toEqual({ format: 3, writtenBy: '7.0.0' })
  })

  it('takes a spool from before the marker through the same steps', async () => {
    await fixtureSpool({ marker: false })
    const ran: string[] = []
    // No marker to find at the first step: the step is told nothing, and reads the files as they are.
    const migrations = steps(ran).map((m) =>
      m.from === 1 ? { ...m, migrate: async () => void ran.push('1->2 unmarked') } : m,
    )
    await openSpoolFormat(spoolDir, { version: '7.0.0', log, format: 3, migrations })
    expect(ran).toEqual(['1->2 unmarked', '2->3 found 2'])
    expect(await marker()).toEqual({ format: 3, writtenBy: '7.0.0' })
  })

  it('starts again from the step cut short, after the steps done', async () => {
    await fixtureSpool({ marker: true })
    const ran: string[] = []
    await expect(
      openSpoolFormat(spoolDir, { version: '7.0.0', log, format: 3, migrations: steps(ran, 2) }),
    ).rejects.toThrow('step 2 cut short')
    expect(await marker()).toEqual({ format: 2, writtenBy: '7.0.0' })
    await openSpoolFormat(spoolDir, { version: '7.0.0', log, format: 3, migrations: steps(ran) })
    expect(ran).toEqual(['1->2 found 1', '2->3 found 2', '2->3 found 2'])
    expect(await marker()).toEqual({ format: 3, writtenBy: '7.0.0' })
  })

  it('migrates nothing when a step is missing, and says which', async () => {
    await fixtureSpool({ marker: true })
    const before = await snapshotTree(spoolDir)
    const ran: string[] = []
    await expect(
      openSpoolFormat(spoolDir, { version: '7.0.0', log, format: 3, migrations: steps(ran).slice(1) }),
    ).rejects.toThrow('no spool migration from format 1')
    expect(ran).toEqual([])
    expect(await snapshotTree(spoolDir)).toEqual(before)
  })

  it('leaves migrating to the agent: a read-only check of an older spool refuses and changes nothing', async () => {
    await fixtureSpool({ marker: true })
    const before = await snapshotTree(spoolDir)
    await expect(
      checkSpoolFormat(spoolDir, { version: '7.0.0', format: 3, migrations: steps([]) }),
    ).rejects.toMatchObject({
      code: 'spool_format_older',
      message:
        `the spool ${spoolDir} is in spool format 1 (written by hajri-agent 0.1.0); this agent (hajri-agent 7.0.0) ` +
        'moves it to format 3 when it starts: start the agent once, then run this again; nothing in the spool was changed',
    })
    expect(await snapshotTree(spoolDir)).toEqual(before)
  })
})
