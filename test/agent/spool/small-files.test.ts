import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readSmallFile, unlinkIfPresent } from '../../../agent/spool/small-files.js'

describe("reading and removing the spool's small files", () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hajri-small-files-'))
  })
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('reads a file whole whether it is the size expected, smaller, or bigger', async () => {
    const path = join(dir, 'a.json')
    const text = `{"items":["${'é'.repeat(3000)}"]}`
    await writeFile(path, text)
    const size = Buffer.byteLength(text)
    expect(await readSmallFile(path, size)).toBe(text)
    expect(await readSmallFile(path, size + 100)).toBe(text)
    // The index's size is stale (a file rewritten by hand, say): nothing is cut off.
    expect(await readSmallFile(path, 10)).toBe(text)
    expect(await readSmallFile(path, 0)).toBe(text)
  })

  it('reads on after a read that returns less than asked, instead of taking it for the whole file', async () => {
    // A pipe holds at most 64 KiB, so a read of a longer text from one returns part of it: the
    // short read POSIX allows, made certain. (On a chunk file it would be a chunk cut short.)
    const fifo = join(dir, 'pipe')
    execFileSync('mkfifo', [fifo])
    const text = JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => `punch ${i}`.repeat(8)) })
    expect(Buffer.byteLength(text)).toBeGreaterThan(4 * 65_536)
    const [read] = await Promise.all([readSmallFile(fifo, Buffer.byteLength(text)), writeFile(fifo, text)])
    expect(read).toBe(text)
  })

  it('reports a missing file as such, and removes one that is there or already gone', async () => {
    const path = join(dir, 'b.json')
    await expect(readSmallFile(path, 10)).rejects.toMatchObject({ code: 'ENOENT' })
    await writeFile(path, '{}')
    await unlinkIfPresent(path)
    await expect(readSmallFile(path, 2)).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(unlinkIfPresent(path)).resolves.toBeUndefined()
    await expect(unlinkIfPresent(dir)).rejects.toMatchObject({
      code: expect.stringMatching(/^E(ISDIR|PERM)$/),
    })
  })
})
